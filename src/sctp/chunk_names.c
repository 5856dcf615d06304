/* Names for logs, counters and tests: chunk types (RFC 9260 section 3.2
 * and the IANA "Chunk Types" registry: ECNE and CWR from RFC 9260 Appendix
 * A, AUTH RFC 4895, ASCONF RFC 5061, RE-CONFIG RFC 6525, PAD RFC 4820,
 * FORWARD TSN RFC 3758, I-DATA and I-FORWARD-TSN RFC 8260) and the reader's
 * parse verdicts (chunk.h). */
#include "sctp/chunk.h"

#define NS_SCTP_V_STR(name) #name,
static const char *const verdict_names[] = {NS_SCTP_VERDICTS(NS_SCTP_V_STR)};
#undef NS_SCTP_V_STR

const char *ns_sctp_verdict_str(enum ns_sctp_verdict v)
{
    if ((unsigned)v >= NS_SCTP_V__COUNT)
        return "?";
    return verdict_names[v];
}

bool ns_sctp_chunk_type_base(uint8_t type)
{
    return type <= NS_SCTP_CT_COOKIE_ACK || type == NS_SCTP_CT_SHUTDOWN_COMPLETE;
}

const char *ns_sctp_chunk_type_name(uint8_t type)
{
    switch (type) {
    case NS_SCTP_CT_DATA:
        return "DATA";
    case NS_SCTP_CT_INIT:
        return "INIT";
    case NS_SCTP_CT_INIT_ACK:
        return "INIT_ACK";
    case NS_SCTP_CT_SACK:
        return "SACK";
    case NS_SCTP_CT_HEARTBEAT:
        return "HEARTBEAT";
    case NS_SCTP_CT_HEARTBEAT_ACK:
        return "HEARTBEAT_ACK";
    case NS_SCTP_CT_ABORT:
        return "ABORT";
    case NS_SCTP_CT_SHUTDOWN:
        return "SHUTDOWN";
    case NS_SCTP_CT_SHUTDOWN_ACK:
        return "SHUTDOWN_ACK";
    case NS_SCTP_CT_ERROR:
        return "ERROR";
    case NS_SCTP_CT_COOKIE_ECHO:
        return "COOKIE_ECHO";
    case NS_SCTP_CT_COOKIE_ACK:
        return "COOKIE_ACK";
    case NS_SCTP_CT_ECNE:
        return "ECNE";
    case NS_SCTP_CT_CWR:
        return "CWR";
    case NS_SCTP_CT_SHUTDOWN_COMPLETE:
        return "SHUTDOWN_COMPLETE";
    case NS_SCTP_CT_AUTH:
        return "AUTH";
    case NS_SCTP_CT_I_DATA:
        return "I_DATA";
    case NS_SCTP_CT_ASCONF_ACK:
        return "ASCONF_ACK";
    case NS_SCTP_CT_RE_CONFIG:
        return "RE_CONFIG";
    case NS_SCTP_CT_PAD:
        return "PAD";
    case NS_SCTP_CT_FORWARD_TSN:
        return "FORWARD_TSN";
    case NS_SCTP_CT_ASCONF:
        return "ASCONF";
    case NS_SCTP_CT_I_FORWARD_TSN:
        return "I_FORWARD_TSN";
    default:
        return "UNKNOWN";
    }
}
