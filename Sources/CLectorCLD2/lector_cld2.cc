// A C entry point for CLD2's C++ API, so that Swift can call it.
#include "lector_cld2.h"

#include <stdio.h>  // compact_lang_det.h uses FILE without including it
#include <string.h>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

extern "C" void lector_cld2_detect(const char *text, int length, lector_cld2_result *result) {
    CLD2::Language languages[3];
    int percents[3] = {0, 0, 0};
    int textBytes = 0;
    bool reliable = false;
    double scores[3];
    int validPrefix = 0;
    CLD2::CLDHints hints = {NULL, NULL, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    // The checking variant: text that is not interchange-valid UTF-8 (noncharacters, for instance) gives
    // UNKNOWN_LANGUAGE instead of undefined behaviour.
    CLD2::Language language = CLD2::ExtDetectLanguageSummaryCheckUTF8(
        text, length, true /* plain text: no HTML tags or entities */, &hints, 0, languages, percents, scores,
        NULL, &textBytes, &reliable, &validPrefix);
    const char *code = CLD2::LanguageCode(language);
    strncpy(result->code, code ? code : "un", sizeof result->code - 1);
    result->code[sizeof result->code - 1] = '\0';
    result->reliable = reliable ? 1 : 0;
    result->percent = languages[0] == language ? percents[0] : 0;
    result->text_bytes = textBytes;
}
