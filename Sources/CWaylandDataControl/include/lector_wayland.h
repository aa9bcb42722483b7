#ifndef LECTOR_WAYLAND_H
#define LECTOR_WAYLAND_H
// The wlr-data-control client glue (made by wayland-scanner, scripts/wayland-glue) and libwayland-client,
// for the Wayland selection reader (Sources/WaylandSelection).
#include <wayland-client.h>
#include "wlr-data-control-unstable-v1-client-protocol.h"

// The interfaces by their real addresses (Swift would copy an imported `const struct`): for wl_registry_bind.
static inline const struct wl_interface *lector_data_control_manager_interface(void) {
    return &zwlr_data_control_manager_v1_interface;
}
static inline const struct wl_interface *lector_seat_interface(void) {
    return &wl_seat_interface;
}
#endif
