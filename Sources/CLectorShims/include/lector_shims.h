/* Lector's GLib helpers: the few calls Swift cannot make itself (variadic functions).
 * Every symbol is prefixed lector_. */
#ifndef LECTOR_SHIMS_H
#define LECTOR_SHIMS_H
#include <glib.h>

/* g_log(domain, level, "%s", message): one log line through GLib's logging (stderr, or the journal). */
void lector_log(const char *domain, GLogLevelFlags level, const char *message);

#endif
