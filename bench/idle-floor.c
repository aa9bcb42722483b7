/* bench/idle-floor: the resident memory any program pays for the shared libraries lector-daemon maps.
 * Usage: idle-floor LIBRARY.so...  Loads each with dlopen(RTLD_NOW | RTLD_GLOBAL) (relocated and
 * initialized, as at a program's start), prints "ready" and waits for SIGTERM. The bench reads its VmRSS:
 * what remains of the daemon's RSS is the daemon's own code and data. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "idle-floor: %s\n", dlerror());
        }
    }
    puts("ready");
    fflush(stdout);
    for (;;) pause();
}
