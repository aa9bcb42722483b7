#include "lector_icu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unicode/ubrk.h>
#include <unicode/uvernum.h>

/* ICU is loaded on the first segmentation, not when the daemon starts: an idle daemon does not map it
 * (and libicudata with it). The names are ICU's versioned ones (ubrk_open -> "ubrk_open_72"), spelled by
 * ICU's own renaming macros, and the pointer types come from ICU's declarations. */
#define LECTOR_NAME(symbol) LECTOR_STRING(symbol)
#define LECTOR_STRING(symbol) #symbol

static struct {
    __typeof__(ubrk_open) *open;
    __typeof__(ubrk_next) *next;
    __typeof__(ubrk_close) *close;
} icu;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

static void icu_load(void) {
    const char *library = "libicuuc.so." LECTOR_NAME(U_ICU_VERSION_MAJOR_NUM);
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle) {
        icu.open = (__typeof__(icu.open))dlsym(handle, LECTOR_NAME(ubrk_open));
        icu.next = (__typeof__(icu.next))dlsym(handle, LECTOR_NAME(ubrk_next));
        icu.close = (__typeof__(icu.close))dlsym(handle, LECTOR_NAME(ubrk_close));
    }
    if (!icu.open || !icu.next || !icu.close) {
        icu.open = NULL;
        fprintf(stderr, "lector: ICU cannot be loaded, text is not cut into sentences: %s\n", dlerror());
    }
}

int32_t lector_sentence_breaks(const uint16_t *text, int32_t length, const char *locale,
                               int32_t *breaks, int32_t capacity) {
    pthread_once(&icu_once, icu_load);
    if (!icu.open) return -1;
    UErrorCode status = U_ZERO_ERROR;
    UBreakIterator *it = icu.open(UBRK_SENTENCE, locale, (const UChar *)text, length, &status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    for (int32_t b = icu.next(it); b != UBRK_DONE && count < capacity; b = icu.next(it)) {
        breaks[count++] = b;
    }
    icu.close(it);
    return count;
}
