// libxcb (the X protocol's C binding), for the X11 selection reader (Sources/X11Selection).
#include <xcb/xcb.h>
