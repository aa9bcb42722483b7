#include "lector_icu.h"
#include <unicode/ubrk.h>

int32_t lector_sentence_breaks(const uint16_t *text, int32_t length, const char *locale,
                               int32_t *breaks, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    UBreakIterator *it = ubrk_open(UBRK_SENTENCE, locale, (const UChar *)text, length, &status);
    if (U_FAILURE(status)) return -1;
    int32_t count = 0;
    for (int32_t b = ubrk_next(it); b != UBRK_DONE && count < capacity; b = ubrk_next(it)) {
        breaks[count++] = b;
    }
    ubrk_close(it);
    return count;
}
