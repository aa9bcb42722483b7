// A C entry point for CLD2's C++ API, so that Swift can call it.
#include "lector_cld2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>  // compact_lang_det.h uses FILE without including it
#include <string.h>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

// CLD2 is loaded on the first detection, not when the daemon starts: an idle daemon does not map it. The
// pointer types come from CLD2's declarations (decltype does not reference the symbols); the names are
// their Itanium C++ ABI manglings, as libcld2.so.0 exports them (`nm -D`).
static struct {
    decltype(&CLD2::ExtDetectLanguageSummaryCheckUTF8) detect;
    decltype(&CLD2::LanguageCode) code;
} cld2;
static pthread_once_t cld2_once = PTHREAD_ONCE_INIT;

static void cld2_load() {
    if (void *handle = dlopen("libcld2.so.0", RTLD_NOW | RTLD_LOCAL)) {
        cld2.detect = reinterpret_cast<decltype(cld2.detect)>(dlsym(handle,
            "_ZN4CLD233ExtDetectLanguageSummaryCheckUTF8EPKcibPKNS_8CLDHintsEiPNS_8LanguageEPiPdPSt6vectorINS_"
            "11ResultChunkESaISA_EES7_PbS7_"));
        cld2.code = reinterpret_cast<decltype(cld2.code)>(dlsym(handle, "_ZN4CLD212LanguageCodeENS_8LanguageE"));
    }
    if (!cld2.detect || !cld2.code) {
        cld2.detect = NULL;
        fprintf(stderr, "lector: CLD2 cannot be loaded, languages are not detected: %s\n", dlerror());
    }
}

extern "C" void lector_cld2_detect(const char *text, int length, lector_cld2_result *result) {
    pthread_once(&cld2_once, cld2_load);
    memset(result, 0, sizeof *result);
    strcpy(result->code, "un");
    if (!cld2.detect) return;
    CLD2::Language languages[3];
    int percents[3] = {0, 0, 0};
    int textBytes = 0;
    bool reliable = false;
    double scores[3];
    int validPrefix = 0;
    CLD2::CLDHints hints = {NULL, NULL, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    // The checking variant: text that is not interchange-valid UTF-8 (noncharacters, for instance) gives
    // UNKNOWN_LANGUAGE instead of undefined behaviour.
    CLD2::Language language = cld2.detect(
        text, length, true /* plain text: no HTML tags or entities */, &hints, 0, languages, percents, scores,
        NULL, &textBytes, &reliable, &validPrefix);
    const char *code = cld2.code(language);
    strncpy(result->code, code ? code : "un", sizeof result->code - 1);
    result->code[sizeof result->code - 1] = '\0';
    result->reliable = reliable ? 1 : 0;
    result->percent = languages[0] == language ? percents[0] : 0;
    result->text_bytes = textBytes;
}
