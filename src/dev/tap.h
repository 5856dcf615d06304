/* TAP device: Ethernet frames through /dev/net/tun (IFF_TAP | IFF_NO_PI).
 * The interface is created if absent (it then disappears when the device is
 * closed) or attached to if it exists (a persistent TAP made with
 * `ip tuntap add`). The Linux side is brought up. */
#ifndef NS_DEV_TAP_H
#define NS_DEV_TAP_H

#include <stddef.h>

#include "dev/dev.h"

/* Open TAP interface `spec`: NAME, or NAME,offload for the virtio-net
 * header and UDP segmentation offload (dev/vnet.h; Linux 6.2 or later).
 * The returned device's mac is derived from the name
 * (ns_dev_mac_from_name), not the kernel side's; the embedder may
 * overwrite it. NULL with a one-line reason in err on failure. */
/* ns_tap_open: nstack/dev.h */

#endif
