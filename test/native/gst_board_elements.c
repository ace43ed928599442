/*
 * The Jetson's GStreamer elements, stood in for by software ones, for the tests of jetprof's board video path
 * (src/video/gstreamer.ts): nvv4l2decoder (NVDEC) is avdec_h264, nvvidconv (the VIC's converter and scaler) is
 * videoconvert then videoscale, nvv4l2h264enc (NVENC) is x264enc. Each is a bin holding the software elements, with
 * pads of any caps, so jetprof's board pipelines parse, link and run here exactly as written for a board. Never shipped: a test builds it into a
 * plugin folder it names in GST_PLUGIN_PATH_1_0.
 *
 *   gcc -shared -fPIC -o libgstjetprofboard.so gst_board_elements.c $(pkg-config --cflags --libs gstreamer-1.0)
 */
#include <gst/gst.h>

typedef struct {
  GstBin parent;
} JpStandIn;

typedef struct {
  GstBinClass parent_class;
  const char *inner; /* the software element inside */
} JpStandInClass;

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void stand_in_class_init(gpointer klass, gpointer inner) {
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  ((JpStandInClass *)klass)->inner = (const char *)inner;
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(element_class, "jetprof board stand-in", "Codec/Converter",
                                        "a software element under the name of a Jetson's hardware element", "jetprof");
}

static void stand_in_init(GTypeInstance *instance, gpointer klass) {
  /* a bin of the software elements, its first sink and last source pads ghosted */
  GstElement *child = gst_parse_bin_from_description(((JpStandInClass *)klass)->inner, TRUE, NULL);
  if (!child) return; /* a software element is missing: the pipeline fails to link, as a missing element does */
  gst_bin_add(GST_BIN(instance), child);
  GstPad *sink = gst_element_get_static_pad(child, "sink");
  GstPad *src = gst_element_get_static_pad(child, "src");
  gst_element_add_pad(GST_ELEMENT(instance), gst_ghost_pad_new("sink", sink));
  gst_element_add_pad(GST_ELEMENT(instance), gst_ghost_pad_new("src", src));
  gst_object_unref(sink);
  gst_object_unref(src);
}

/* the board's element, the software element standing in for it, and the stand-in's type name */
static const char *STAND_INS[][3] = {
    {"nvv4l2decoder", "avdec_h264", "JpStandInNvV4l2Decoder"},
    {"nvvidconv", "videoconvert ! videoscale add-borders=false", "JpStandInNvVidConv"},
    {"nvv4l2h264enc", "x264enc", "JpStandInNvV4l2H264Enc"},
};

static gboolean plugin_init(GstPlugin *plugin) {
  for (guint i = 0; i < G_N_ELEMENTS(STAND_INS); i++) {
    GType type = g_type_from_name(STAND_INS[i][2]);
    if (!type) {
      GTypeInfo info = {sizeof(JpStandInClass), NULL, NULL, stand_in_class_init, NULL, STAND_INS[i][1],
                        sizeof(JpStandIn), 0, stand_in_init, NULL};
      type = g_type_register_static(GST_TYPE_BIN, STAND_INS[i][2], &info, 0);
    }
    if (!gst_element_register(plugin, STAND_INS[i][0], GST_RANK_NONE, type)) return FALSE;
  }
  return TRUE;
}

#define PACKAGE "jetprof-test"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, jetprofboard, "the Jetson's video elements, stood in for by software",
                  plugin_init, "1.0", "LGPL", "jetprof-test", "https://github.com/")
