/* ldap/caps.h: how much ldap/ takes from a DC, whatever it answers (docs/security-model.md lists
 * every module's caps). A DC past a cap is an error naming it, never a loop or a heap
 * exhausted. */
#ifndef PV_LDAP_CAPS_H
#define PV_LDAP_CAPS_H

/* values of one attribute read by pv_ldap_read_values (all its ranged slices together): the
 * alias SPNs of one computer account are 2 per user number, and AD itself stops near 1.3
 * million values of a linked attribute */
#define PV_LDAP_VALUES_MAX 4000000
/* the highest value number a slice may name ("attr;range=LO-HI"): past the values cap */
#define PV_LDAP_RANGE_MAX PV_LDAP_VALUES_MAX

#endif
