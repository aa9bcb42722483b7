/* The few GTK 4 calls Swift cannot make itself (variadic functions, macros). Every symbol is prefixed
 * lector_gtk_. */
#ifndef LECTOR_GTK_H
#define LECTOR_GTK_H
#include <gtk/gtk.h>

/* gtk_accessible_update_property(widget, GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1): the name screen
 * readers (Orca, through AT-SPI) read for `widget`. */
void lector_gtk_set_accessible_label(GtkWidget *widget, const char *label);

/* gtk_accessible_update_property(widget, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1). */
void lector_gtk_set_accessible_description(GtkWidget *widget, const char *text);

/* g_object_set(object, name, value, NULL) for a string, int, double or boolean property. */
void lector_gtk_set_string(gpointer object, const char *name, const char *value);
void lector_gtk_set_int(gpointer object, const char *name, int value);
void lector_gtk_set_double(gpointer object, const char *name, double value);
void lector_gtk_set_bool(gpointer object, const char *name, gboolean value);

/* gtk_text_buffer_create_tag(buffer, name, NULL): a tag with no properties yet (set them with the above). */
GtkTextTag *lector_gtk_create_tag(GtkTextBuffer *buffer, const char *name);

/* GDK_TYPE_FILE_LIST and G_TYPE_STRING (macros), for drop targets. */
GType lector_gtk_file_list_type(void);
GType lector_gtk_string_type(void);

/* The paths of the local files in a GValue holding a GdkFileList, joined by '\n' (g_free it); NULL when the
 * value holds no file list. */
char *lector_gtk_file_list_paths(const GValue *value);

/* The string in a GValue holding a G_TYPE_STRING (NULL otherwise); owned by the value. */
const char *lector_gtk_value_string(const GValue *value);

/* Installs `css` for the whole display at application priority (a provider kept until the next call). */
void lector_gtk_set_css(const char *css);

/* Whether the focus widget of `window` uses Space and the arrow keys itself (a text field, a spin button,
 * a slider, a drop-down list): then the window's own shortcuts leave those keys to it. */
gboolean lector_gtk_focus_takes_keys(GtkWindow *window);

#endif
