#ifndef LECTOR_CLD2_H
#define LECTOR_CLD2_H

#ifdef __cplusplus
extern "C" {
#endif

/// What CLD2 found in a text (compact_lang_det.h, CLD2::ExtDetectLanguageSummaryCheckUTF8).
typedef struct {
    /// The language's code as CLD2 prints it (CLD2::LanguageCode): ISO 639-1 where there is one
    /// ("en", "de", "zh", "zh-Hant", "iw"), "un" for unknown. NUL-terminated.
    char code[16];
    /// CLD2's is_reliable: the language is clearly more probable than the next one.
    int reliable;
    /// Share of the text's letters in that language, 0-100.
    int percent;
    /// Bytes of letters CLD2 scored (tags, digits and punctuation excluded).
    int text_bytes;
} lector_cld2_result;

/// Detects the language of `length` bytes of UTF-8 plain text at `text`; text that is not interchange-valid
/// UTF-8 gives "un". libcld2 is opened on the first call; when it cannot be, every text gives "un" and one
/// line on standard error says why.
void lector_cld2_detect(const char *text, int length, lector_cld2_result *result);

#ifdef __cplusplus
}
#endif

#endif
