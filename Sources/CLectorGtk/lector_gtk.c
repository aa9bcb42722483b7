#include "lector_gtk.h"

void lector_gtk_set_accessible_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

void lector_gtk_set_accessible_description(GtkWidget *widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

void lector_gtk_set_string(gpointer object, const char *name, const char *value) { g_object_set(object, name, value, NULL); }
void lector_gtk_set_int(gpointer object, const char *name, int value) { g_object_set(object, name, value, NULL); }
void lector_gtk_set_double(gpointer object, const char *name, double value) { g_object_set(object, name, value, NULL); }
void lector_gtk_set_bool(gpointer object, const char *name, gboolean value) { g_object_set(object, name, value, NULL); }

GtkTextTag *lector_gtk_create_tag(GtkTextBuffer *buffer, const char *name) {
    return gtk_text_buffer_create_tag(buffer, name, NULL);
}

GType lector_gtk_file_list_type(void) { return GDK_TYPE_FILE_LIST; }
GType lector_gtk_string_type(void) { return G_TYPE_STRING; }

char *lector_gtk_file_list_paths(const GValue *value) {
    if (!G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST)) return NULL;
    GString *joined = g_string_new(NULL);
    GSList *files = gdk_file_list_get_files(g_value_get_boxed(value));
    for (GSList *l = files; l; l = l->next) {
        char *path = g_file_get_path(l->data);
        if (!path) continue;
        if (joined->len) g_string_append_c(joined, '\n');
        g_string_append(joined, path);
        g_free(path);
    }
    g_slist_free(files);
    return g_string_free(joined, FALSE);
}

const char *lector_gtk_value_string(const GValue *value) {
    return G_VALUE_HOLDS_STRING(value) ? g_value_get_string(value) : NULL;
}

void lector_gtk_set_css(const char *css) {
    static GtkCssProvider *provider;
    GdkDisplay *display = gdk_display_get_default();
    if (!display) return;
    if (provider) gtk_style_context_remove_provider_for_display(display, GTK_STYLE_PROVIDER(provider));
    else provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css, -1);
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
}

gboolean lector_gtk_focus_takes_keys(GtkWindow *window) {
    for (GtkWidget *w = gtk_window_get_focus(window); w; w = gtk_widget_get_parent(w)) {
        if (GTK_IS_EDITABLE(w) || GTK_IS_RANGE(w) || GTK_IS_DROP_DOWN(w) || GTK_IS_POPOVER(w)) return TRUE;
        if (GTK_IS_WINDOW(w)) break;
    }
    return FALSE;
}
