/* Lector's GLib helpers: the few calls Swift cannot make itself (variadic functions).
 * Every symbol is prefixed lector_. */
#ifndef LECTOR_SHIMS_H
#define LECTOR_SHIMS_H
#include <glib.h>

/* g_log(domain, level, "%s", message): one log line through GLib's logging (stderr, or the journal). */
void lector_log(const char *domain, GLogLevelFlags level, const char *message);

/* malloc_trim(0) (glibc, malloc.h, which Swift's Glibc module does not include): gives free heap memory of
 * every arena back to the system. Returns 1 when some was given back. */
int lector_malloc_trim(void);

/* mallopt(M_MMAP_THRESHOLD, bytes) (glibc, malloc.h): blocks of at least `bytes` are mapped on their own and
 * unmapped when freed; setting it turns off glibc's rising threshold. Returns 1 on success. */
int lector_malloc_set_mmap_threshold(int bytes);

#endif
