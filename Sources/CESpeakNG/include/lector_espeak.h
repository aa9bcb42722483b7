/* eSpeak NG for Lector: its declarations (espeak_ng.h, speak_lib.h) and the functions Lector calls, from
 * libespeak-ng.so.1 opened on first use. The daemon needs eSpeak NG only for its voice list, and only once
 * something is to be read, so an idle daemon does not map the library (nor libasound, libpcaudio and
 * libsonic, which come with it); the worker opens it when it starts. */
#ifndef LECTOR_ESPEAK_H
#define LECTOR_ESPEAK_H

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>

/* The functions Lector calls, with eSpeak NG's own types (speak_lib.h, espeak_ng.h). */
typedef struct {
    __typeof__(espeak_ng_InitializePath) *_Nonnull InitializePath;
    __typeof__(espeak_ListVoices) *_Nonnull ListVoices;
    __typeof__(espeak_Initialize) *_Nonnull Initialize;
    __typeof__(espeak_SetSynthCallback) *_Nonnull SetSynthCallback;
    __typeof__(espeak_SetVoiceByName) *_Nonnull SetVoiceByName;
    __typeof__(espeak_SetParameter) *_Nonnull SetParameter;
    __typeof__(espeak_Synth) *_Nonnull Synth;
} lector_espeak_functions;

/* The functions, loaded on the first call (thread-safe). NULL when libespeak-ng.so.1 or one of them cannot
 * be loaded; the first such call writes one line saying why to standard error. */
const lector_espeak_functions *_Nullable lector_espeak(void);

#endif
