#include "lector_shims.h"
#include <malloc.h>

void lector_log(const char *domain, GLogLevelFlags level, const char *message) {
    g_log(domain, level, "%s", message);
}

int lector_malloc_trim(void) {
    return malloc_trim(0);
}

int lector_malloc_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
