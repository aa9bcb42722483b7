#include "lector_espeak.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static lector_espeak_functions functions;
static const lector_espeak_functions *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LECTOR_LOAD(field, symbol) \
    ((functions.field = (__typeof__(functions.field))dlsym(handle, #symbol)) != NULL)

static void load(void) {
    void *handle = dlopen("libespeak-ng.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle && LECTOR_LOAD(InitializePath, espeak_ng_InitializePath) && LECTOR_LOAD(ListVoices, espeak_ListVoices) &&
        LECTOR_LOAD(Initialize, espeak_Initialize) && LECTOR_LOAD(SetSynthCallback, espeak_SetSynthCallback) &&
        LECTOR_LOAD(SetVoiceByName, espeak_SetVoiceByName) && LECTOR_LOAD(SetParameter, espeak_SetParameter) &&
        LECTOR_LOAD(Synth, espeak_Synth)) {
        loaded = &functions;
    } else {
        fprintf(stderr, "lector: eSpeak NG cannot be loaded: %s\n", dlerror());
    }
}

const lector_espeak_functions *lector_espeak(void) {
    pthread_once(&once, load);
    return loaded;
}
