/* Lector's ICU helper: ICU's C API renames every symbol per version (ubrk_open -> ubrk_open_72) with
 * macros Swift cannot see, so the one call Lector needs goes through here. */
#ifndef LECTOR_ICU_H
#define LECTOR_ICU_H
#include <stdint.h>

/* Sentence boundaries of `text` (UTF-16, `length` code units) by ICU's sentence break iterator for
 * `locale` (BCP 47 or ICU id, "" for root). Writes the end offset of every sentence (in UTF-16 code
 * units, ascending, the last one == length) into `breaks` (at most `capacity`). Returns how many were
 * written, or -1 when ICU fails or cannot be loaded (libicuuc is opened on the first call; when that
 * fails, one line says why on standard error). */
int32_t lector_sentence_breaks(const uint16_t *text, int32_t length, const char *locale,
                               int32_t *breaks, int32_t capacity);

#endif
