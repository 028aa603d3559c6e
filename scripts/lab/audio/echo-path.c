/* The audio lab's echo path (audio-lab echo): a LADSPA plugin that delays a mono signal by a
 * whole number of samples and scales it, run by PulseAudio's module-ladspa-sink inside the
 * microphone's sink, so that what a lab speaker plays reaches the lab microphone a fixed time
 * later at a fixed level, on the microphone's clock. Its two controls: the delay in seconds
 * (up to MAX_DELAY_SECONDS) and the gain as a factor. */
#include <ladspa.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DELAY_SECONDS 5

enum { PORT_DELAY, PORT_GAIN, PORT_INPUT, PORT_OUTPUT, PORT_COUNT };

typedef struct {
    LADSPA_Data *ports[PORT_COUNT];
    LADSPA_Data *ring;
    unsigned long capacity; /* samples in ring: a power of two above the longest delay */
    unsigned long write;
    double rate;
} EchoPath;

static LADSPA_Handle instantiate(const LADSPA_Descriptor *descriptor, unsigned long rate) {
    (void)descriptor;
    EchoPath *path = calloc(1, sizeof *path);
    if (!path) return NULL;
    unsigned long longest = (unsigned long)rate * MAX_DELAY_SECONDS + 1;
    path->capacity = 1;
    while (path->capacity < longest) path->capacity <<= 1;
    path->ring = calloc(path->capacity, sizeof *path->ring);
    if (!path->ring) {
        free(path);
        return NULL;
    }
    path->rate = (double)rate;
    return path;
}

static void connect_port(LADSPA_Handle handle, unsigned long port, LADSPA_Data *data) {
    if (port < PORT_COUNT) ((EchoPath *)handle)->ports[port] = data;
}

static void activate(LADSPA_Handle handle) {
    EchoPath *path = handle;
    memset(path->ring, 0, path->capacity * sizeof *path->ring);
    path->write = 0;
}

static void run(LADSPA_Handle handle, unsigned long count) {
    EchoPath *path = handle;
    double seconds = *path->ports[PORT_DELAY];
    if (seconds < 0) seconds = 0;
    if (seconds > MAX_DELAY_SECONDS) seconds = MAX_DELAY_SECONDS;
    unsigned long delay = (unsigned long)(seconds * path->rate + 0.5);
    LADSPA_Data gain = *path->ports[PORT_GAIN];
    const LADSPA_Data *input = path->ports[PORT_INPUT];
    LADSPA_Data *output = path->ports[PORT_OUTPUT];
    unsigned long mask = path->capacity - 1;
    for (unsigned long i = 0; i < count; i++) {
        /* Read before writing: the input and output buffers may be the same. */
        LADSPA_Data sample = input[i];
        output[i] = gain * path->ring[(path->write - delay) & mask];
        path->ring[path->write] = sample;
        path->write = (path->write + 1) & mask;
    }
}

static void cleanup(LADSPA_Handle handle) {
    EchoPath *path = handle;
    free(path->ring);
    free(path);
}

static const LADSPA_PortDescriptor port_descriptors[PORT_COUNT] = {
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_CONTROL,
    LADSPA_PORT_INPUT | LADSPA_PORT_AUDIO,
    LADSPA_PORT_OUTPUT | LADSPA_PORT_AUDIO,
};
static const char *const port_names[PORT_COUNT] = {"Delay (seconds)", "Gain", "Input", "Output"};
static const LADSPA_PortRangeHint port_hints[PORT_COUNT] = {
    {LADSPA_HINT_BOUNDED_BELOW | LADSPA_HINT_BOUNDED_ABOVE, 0, MAX_DELAY_SECONDS},
    {LADSPA_HINT_BOUNDED_BELOW, 0, 0},
    {0, 0, 0},
    {0, 0, 0},
};

static const LADSPA_Descriptor descriptor = {
    .UniqueID = 0, /* a lab plugin, not for distribution: no registered ID */
    .Label = "intercom_lab_echo",
    .Properties = LADSPA_PROPERTY_HARD_RT_CAPABLE,
    .Name = "intercom audio lab echo path",
    .Maker = "intercom",
    .Copyright = "None",
    .PortCount = PORT_COUNT,
    .PortDescriptors = port_descriptors,
    .PortNames = port_names,
    .PortRangeHints = port_hints,
    .instantiate = instantiate,
    .connect_port = connect_port,
    .activate = activate,
    .run = run,
    .cleanup = cleanup,
};

const LADSPA_Descriptor *ladspa_descriptor(unsigned long index) {
    return index == 0 ? &descriptor : NULL;
}
