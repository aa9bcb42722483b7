/*
 * bench/dbus-client: a persistent D-Bus client for bench/bench.py, so that a measured call costs one
 * round trip on an open session-bus connection and no process start (the way a desktop's media-key
 * handler or a screen reader calls Lector).
 *
 * Reads one command a line on standard input, answers one line on standard output:
 *   load PATH                  keep PATH and its contents for the next `speak`, `speakfile`, `bare` -> ok 0
 *   speak RATE                 org.lector.Lector1.Speak(text, {rate: RATE})               -> ok US
 *   speakfile RATE             org.lector.Lector1.SpeakFile(fd of PATH, {rate: RATE}): the daemon reads
 *                              the file itself                                            -> ok US
 *   bare                       the text to a method that does not exist (org.lector.Lector1.NoSuchMethod):
 *                              what carrying it over the bus costs, with no work done     -> ok US
 *   call DEST PATH IFACE NAME  a method without arguments (Pause, Play, PlayPause, ...)   -> ok US
 *   get DEST PATH IFACE PROP   org.freedesktop.DBus.Properties.Get, value printed         -> ok US VALUE
 *   setpos USEC                MPRIS SetPosition(current mpris:trackid, USEC)             -> ok US
 *   quit
 * US is the round trip of the call in microseconds (CLOCK_MONOTONIC around the blocking call);
 * a failed call answers "err MESSAGE". Built by bench/run: cc bench/dbus-client.c $(pkg-config gio-2.0).
 */
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static gint64 now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static GVariant *call(GDBusConnection *bus, const char *dest, const char *path, const char *iface,
                      const char *method, GVariant *args, gint64 *elapsed, GError **error) {
    gint64 t0 = now_us();
    GVariant *reply = g_dbus_connection_call_sync(bus, dest, path, iface, method, args, NULL,
                                                  G_DBUS_CALL_FLAGS_NONE, 30000, NULL, error);
    *elapsed = now_us() - t0;
    return reply;
}

/* The options of every Speak and SpeakFile: {rate: RATE, language: "en"}. */
static GVariant *speak_options(int rate) {
    GVariantBuilder opts;
    g_variant_builder_init(&opts, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&opts, "{sv}", "rate", g_variant_new_int32(rate));
    g_variant_builder_add(&opts, "{sv}", "language", g_variant_new_string("en"));
    return g_variant_builder_end(&opts);
}

int main(void) {
    GError *error = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (!bus) {
        fprintf(stderr, "dbus-client: %s\n", error->message);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *text = g_strdup("");
    char *path = g_strdup("/dev/null");
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        gchar **w = g_strsplit(line, " ", 6);
        guint n = g_strv_length(w);
        gint64 us = 0;
        GVariant *reply = NULL;
        g_clear_error(&error);
        if (n == 0) {
            g_strfreev(w);
            continue;
        } else if (!strcmp(w[0], "quit")) {
            g_strfreev(w);
            break;
        } else if (!strcmp(w[0], "load") && n == 2) {
            g_free(text);
            g_free(path);
            path = g_strdup(w[1]);
            gsize len = 0;
            if (!g_file_get_contents(w[1], &text, &len, &error)) text = g_strdup("");
            if (!error) printf("ok 0\n");
        } else if (!strcmp(w[0], "speak") && n == 2) {
            reply = call(bus, "org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                         g_variant_new("(s@a{sv})", text, speak_options(atoi(w[1]))), &us, &error);
            if (reply) printf("ok %" G_GINT64_FORMAT "\n", us);
        } else if (!strcmp(w[0], "speakfile") && n == 2) {
            gint64 t0 = now_us();
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            GUnixFDList *fds = g_unix_fd_list_new_from_array(&fd, 1); /* takes fd */
            reply = g_dbus_connection_call_with_unix_fd_list_sync(
                bus, "org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "SpeakFile",
                g_variant_new("(h@a{sv})", 0, speak_options(atoi(w[1]))), NULL, G_DBUS_CALL_FLAGS_NONE, 30000, fds, NULL, NULL, &error);
            us = now_us() - t0;
            g_object_unref(fds);
            if (reply) printf("ok %" G_GINT64_FORMAT "\n", us);
        } else if (!strcmp(w[0], "bare") && n == 1) {
            GVariant *r = call(bus, "org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "NoSuchMethod",
                               g_variant_new("(s)", text), &us, &error);
            if (r) g_variant_unref(r);
            if (error && g_dbus_error_is_remote_error(error)) {
                g_clear_error(&error); /* the expected UnknownMethod: the message went there and back */
                printf("ok %" G_GINT64_FORMAT "\n", us);
            }
        } else if (!strcmp(w[0], "call") && n == 5) {
            reply = call(bus, w[1], w[2], w[3], w[4], NULL, &us, &error);
            if (reply) printf("ok %" G_GINT64_FORMAT "\n", us);
        } else if (!strcmp(w[0], "get") && n == 5) {
            reply = call(bus, w[1], w[2], "org.freedesktop.DBus.Properties", "Get",
                         g_variant_new("(ss)", w[3], w[4]), &us, &error);
            if (reply) {
                gchar *s = g_variant_print(reply, FALSE);
                printf("ok %" G_GINT64_FORMAT " %s\n", us, s);
                g_free(s);
            }
        } else if (!strcmp(w[0], "setpos") && n == 2) {
            gint64 unused;
            GVariant *meta = call(bus, "org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2",
                                  "org.freedesktop.DBus.Properties", "Get",
                                  g_variant_new("(ss)", "org.mpris.MediaPlayer2.Player", "Metadata"),
                                  &unused, &error);
            if (meta) {
                GVariant *boxed = NULL;
                g_variant_get(meta, "(v)", &boxed);
                const char *track = NULL;
                GVariant *tv = g_variant_lookup_value(boxed, "mpris:trackid", G_VARIANT_TYPE_OBJECT_PATH);
                if (tv) track = g_variant_get_string(tv, NULL);
                if (track) {
                    reply = call(bus, "org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2",
                                 "org.mpris.MediaPlayer2.Player", "SetPosition",
                                 g_variant_new("(ox)", track, (gint64)g_ascii_strtoll(w[1], NULL, 10)), &us, &error);
                    if (reply) printf("ok %" G_GINT64_FORMAT "\n", us);
                } else {
                    printf("err no mpris:trackid\n");
                }
                if (tv) g_variant_unref(tv);
                g_variant_unref(boxed);
                g_variant_unref(meta);
            }
        } else {
            printf("err bad command: %s\n", line);
        }
        if (error) {
            gchar *m = g_strdelimit(g_strdup(error->message), "\n", ' ');
            printf("err %s\n", m);
            g_free(m);
        }
        if (reply) g_variant_unref(reply);
        g_strfreev(w);
    }
    g_free(text);
    g_free(path);
    g_object_unref(bus);
    return 0;
}
