#ifndef INTERCOM_CGPIOD_SHIM_H
#define INTERCOM_CGPIOD_SHIM_H

// One requested GPIO line, through libgpiod 1.x (Debian 12) or 2.x (Debian 13): the installed
// headers choose when compiling, and Swift sees the same few calls either way.

#include <gpiod.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

// Which step failed, for the error message.
typedef enum {
    INTERCOM_GPIO_OPEN_CHIP,
    INTERCOM_GPIO_FIND_LINE,
    INTERCOM_GPIO_REQUEST_LINE,
} intercom_gpio_step;

#ifdef GPIOD_LINE_BULK_MAX_LINES // only libgpiod 1.x defines it

typedef struct intercom_gpio_line {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
} intercom_gpio_line;

// An input is pulled up (a button shorting the line to ground); an output starts inactive.
// NULL with errno set and *failed saying where.
static inline intercom_gpio_line *intercom_gpio_request(const char *chip_name, unsigned int offset,
                                                        bool output, bool active_low,
                                                        const char *consumer, intercom_gpio_step *failed) {
    intercom_gpio_line *held = calloc(1, sizeof *held);
    if (!held) { *failed = INTERCOM_GPIO_REQUEST_LINE; return NULL; }
    // A path, a name (gpiochip0), a number or a label.
    held->chip = gpiod_chip_open_lookup(chip_name);
    if (!held->chip) { *failed = INTERCOM_GPIO_OPEN_CHIP; free(held); return NULL; }
    held->line = gpiod_chip_get_line(held->chip, offset);
    int result = -1;
    if (!held->line) {
        *failed = INTERCOM_GPIO_FIND_LINE;
    } else if (output) {
        result = gpiod_line_request_output(held->line, consumer, 0);
    } else {
        int flags = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP | (active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0);
        result = gpiod_line_request_input_flags(held->line, consumer, flags);
    }
    if (result != 0) {
        if (held->line) *failed = INTERCOM_GPIO_REQUEST_LINE;
        int code = errno;
        gpiod_chip_close(held->chip);
        free(held);
        errno = code;
        return NULL;
    }
    return held;
}

static inline int intercom_gpio_get(intercom_gpio_line *held) { return gpiod_line_get_value(held->line); }

static inline int intercom_gpio_set(intercom_gpio_line *held, bool active) {
    return gpiod_line_set_value(held->line, active ? 1 : 0);
}

static inline void intercom_gpio_release(intercom_gpio_line *held) {
    gpiod_line_release(held->line);
    gpiod_chip_close(held->chip);
    free(held);
}

#else // libgpiod 2.x: chips open by path only; a request outlives its chip's handle

#include <dirent.h>
#include <stdio.h>
#include <string.h>

typedef struct intercom_gpio_line {
    struct gpiod_line_request *request;
    unsigned int offset;
} intercom_gpio_line;

static inline struct gpiod_chip *intercom_gpio_open_chip_by_label(const char *label) {
    DIR *dev = opendir("/dev");
    if (!dev) return NULL;
    struct gpiod_chip *found = NULL;
    struct dirent *entry;
    char path[300];
    while (!found && (entry = readdir(dev))) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *chip = gpiod_chip_open(path);
        if (!chip) continue;
        struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
        if (info && strcmp(gpiod_chip_info_get_label(info), label) == 0) found = chip;
        if (info) gpiod_chip_info_free(info);
        if (!found) gpiod_chip_close(chip);
    }
    closedir(dev);
    if (!found) errno = ENOENT;
    return found;
}

// The names libgpiod 1's gpiod_chip_open_lookup took: a path, a name (gpiochip0), a number
// or a label.
static inline struct gpiod_chip *intercom_gpio_open_chip(const char *name) {
    char path[300];
    if (name[0] == '/') return gpiod_chip_open(name);
    char *end = NULL;
    unsigned long number = strtoul(name, &end, 10);
    if (name[0] >= '0' && name[0] <= '9' && *end == '\0') {
        snprintf(path, sizeof path, "/dev/gpiochip%lu", number);
        return gpiod_chip_open(path);
    }
    if (strncmp(name, "gpiochip", 8) == 0 && !strchr(name, '/')) {
        snprintf(path, sizeof path, "/dev/%s", name);
        struct gpiod_chip *chip = gpiod_chip_open(path);
        if (chip) return chip;
    }
    return intercom_gpio_open_chip_by_label(name);
}

static inline intercom_gpio_line *intercom_gpio_request(const char *chip_name, unsigned int offset,
                                                        bool output, bool active_low,
                                                        const char *consumer, intercom_gpio_step *failed) {
    struct gpiod_chip *chip = intercom_gpio_open_chip(chip_name);
    if (!chip) { *failed = INTERCOM_GPIO_OPEN_CHIP; return NULL; }
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, offset);
    if (!info) {
        int code = errno;
        gpiod_chip_close(chip);
        errno = code;
        *failed = INTERCOM_GPIO_FIND_LINE;
        return NULL;
    }
    gpiod_line_info_free(info);

    *failed = INTERCOM_GPIO_REQUEST_LINE;
    intercom_gpio_line *held = calloc(1, sizeof *held);
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    if (held && settings && line_config && request_config) {
        if (output) {
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
            gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE);
        } else {
            gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
            gpiod_line_settings_set_bias(settings, GPIOD_LINE_BIAS_PULL_UP);
            gpiod_line_settings_set_active_low(settings, active_low);
        }
        gpiod_request_config_set_consumer(request_config, consumer);
        if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0) {
            held->request = gpiod_chip_request_lines(chip, request_config, line_config);
            held->offset = offset;
        }
    } else {
        errno = ENOMEM;
    }
    int code = errno;
    if (request_config) gpiod_request_config_free(request_config);
    if (line_config) gpiod_line_config_free(line_config);
    if (settings) gpiod_line_settings_free(settings);
    gpiod_chip_close(chip);
    if (held && !held->request) { free(held); held = NULL; }
    if (!held) errno = code;
    return held;
}

static inline int intercom_gpio_get(intercom_gpio_line *held) {
    enum gpiod_line_value value = gpiod_line_request_get_value(held->request, held->offset);
    return value == GPIOD_LINE_VALUE_ERROR ? -1 : value == GPIOD_LINE_VALUE_ACTIVE;
}

static inline int intercom_gpio_set(intercom_gpio_line *held, bool active) {
    return gpiod_line_request_set_value(held->request, held->offset,
                                        active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

static inline void intercom_gpio_release(intercom_gpio_line *held) {
    gpiod_line_request_release(held->request);
    free(held);
}

#endif

#endif
