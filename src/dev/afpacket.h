/* AF_PACKET device: an existing Ethernet interface (typically one end of a
 * veth pair) through a raw packet socket, see packet(7). The interface is
 * put in promiscuous mode for the socket's lifetime because the stack's MAC
 * differs from the interface's, and brought up if it is down. Our own
 * transmissions are not read back. */
#ifndef NS_DEV_AFPACKET_H
#define NS_DEV_AFPACKET_H

#include <stddef.h>

#include "dev/dev.h"

/* Open interface `ifname`. mac is derived from the name
 * (ns_dev_mac_from_name); the embedder may overwrite it. NULL with a
 * one-line reason in err on failure. */
/* ns_afpacket_open: nstack/dev.h */

#endif
