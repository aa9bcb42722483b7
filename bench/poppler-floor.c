/* bench/poppler-floor: what poppler-glib alone takes to open a PDF held in memory and extract the text of its
 * first pages, in a process where poppler is already loaded and warm: the least any reader built on poppler
 * pays before it knows a PDF's first words (Lector's waiting PDF worker is in that state).
 * Usage: poppler-floor FILE.pdf PAGES RUNS (PAGES 0: open it only)  Prints "poppler-floor MIN_MS MEDIAN_MS" over RUNS runs, after one
 * run that is not counted. */
#include <poppler.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: poppler-floor FILE.pdf PAGES RUNS\n");
        return 2;
    }
    gchar *data;
    gsize length;
    GError *error = NULL;
    if (!g_file_get_contents(argv[1], &data, &length, &error)) {
        fprintf(stderr, "poppler-floor: %s\n", error->message);
        return 1;
    }
    int pages = atoi(argv[2]), runs = atoi(argv[3]);
    if (pages < 0 || runs < 1) return 2;
    GBytes *bytes = g_bytes_new_take(data, length);
    double *times = calloc(runs, sizeof(double));
    for (int run = -1; run < runs; run++) {
        double start = now_ms();
        GInputStream *stream = g_memory_input_stream_new_from_bytes(bytes);
        PopplerDocument *document = poppler_document_new_from_stream(stream, length, NULL, NULL, &error);
        if (!document) {
            fprintf(stderr, "poppler-floor: %s\n", error->message);
            return 1;
        }
        int count = poppler_document_get_n_pages(document);
        for (int i = 0; i < pages && i < count; i++) {
            PopplerPage *page = poppler_document_get_page(document, i);
            g_free(poppler_page_get_text(page));
            g_object_unref(page);
        }
        g_object_unref(document);
        g_object_unref(stream);
        if (run >= 0) times[run] = now_ms() - start;
    }
    qsort(times, runs, sizeof(double), compare);
    printf("poppler-floor %.3f %.3f\n", times[0], times[runs / 2]);
    return 0;
}
