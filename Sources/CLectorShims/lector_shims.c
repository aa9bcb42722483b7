#include "lector_shims.h"

void lector_log(const char *domain, GLogLevelFlags level, const char *message) {
    g_log(domain, level, "%s", message);
}
