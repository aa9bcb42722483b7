#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>
