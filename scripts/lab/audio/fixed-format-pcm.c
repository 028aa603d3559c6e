/*
 * An ALSA PCM that offers exactly one rate, one channel count and one sample format, like a
 * sound card with fixed hardware (a Raspberry Pi's onboard audio at 44.1 kHz, a stereo-only
 * USB card), and passes the audio unchanged to a slave PCM that does the real work.
 *
 * The audio lab puts it in front of PulseAudio null sinks. The pulse PCM of
 * libasound2-plugins accepts every rate, channel count and format, and alsa-lib's own plugins
 * can only widen what a device accepts, never narrow the rate; this is the narrowing part,
 * so that intercom's negotiation really meets a device it must convert for.
 *
 * Configuration:
 *   pcm.NAME {
 *       type TYPE              # a pcm_type whose lib is this file, built as a shared object
 *       slave "PCM"            # the PCM that plays or records, opened with this rate/channels/format
 *       rate 44100
 *       channels 2
 *       format S16_LE
 *   }
 *
 * Timing comes from the slave: a transfer waits until the slave has taken or given some
 * audio, and the pointer reports every transferred frame as done at once, so alsa-lib never
 * waits on this plugin itself.
 */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct fixed_pcm {
	snd_pcm_ioplug_t io;
	snd_pcm_t *slave;
	/* Frames handed to or taken from the slave since the last prepare. */
	snd_pcm_uframes_t transferred;
};

static int fixed_start(snd_pcm_ioplug_t *io)
{
	(void)io;
	return 0;
}

static int fixed_stop(snd_pcm_ioplug_t *io)
{
	struct fixed_pcm *pcm = io->private_data;
	return snd_pcm_drop(pcm->slave);
}

static snd_pcm_sframes_t fixed_pointer(snd_pcm_ioplug_t *io)
{
	struct fixed_pcm *pcm = io->private_data;
	/* Capture reports a period ready ahead of the reader, so alsa-lib calls transfer,
	 * which waits in the slave for the audio to exist. */
	snd_pcm_uframes_t ahead = io->stream == SND_PCM_STREAM_CAPTURE ? io->period_size : 0;
	return (pcm->transferred + ahead) % io->buffer_size;
}

static snd_pcm_sframes_t fixed_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
					snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
	struct fixed_pcm *pcm = io->private_data;
	/* At most a period at a time keeps the pointer's step below the buffer size. */
	if (size > io->period_size)
		size = io->period_size;
	char *frames = (char *)areas[0].addr + (areas[0].first + offset * areas[0].step) / 8;
	for (;;) {
		snd_pcm_sframes_t done = io->stream == SND_PCM_STREAM_PLAYBACK
			? snd_pcm_writei(pcm->slave, frames, size)
			: snd_pcm_readi(pcm->slave, frames, size);
		if (done > 0)
			pcm->transferred += done;
		if (done != -EAGAIN)
			return done;
		/* The pulse PCM's poll can say ready before there is room or data, and waiting in
		 * it then spins; a millisecond's sleep cannot. */
		usleep(1000);
	}
}

static int fixed_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
	struct fixed_pcm *pcm = io->private_data;
	snd_pcm_hw_params_t *slave_params;
	snd_pcm_uframes_t period = io->period_size, buffer = io->buffer_size;
	int err;
	(void)params;

	snd_pcm_hw_params_alloca(&slave_params);
	if ((err = snd_pcm_hw_params_any(pcm->slave, slave_params)) < 0 ||
	    (err = snd_pcm_hw_params_set_access(pcm->slave, slave_params, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
	    (err = snd_pcm_hw_params_set_format(pcm->slave, slave_params, io->format)) < 0 ||
	    (err = snd_pcm_hw_params_set_channels(pcm->slave, slave_params, io->channels)) < 0 ||
	    (err = snd_pcm_hw_params_set_rate(pcm->slave, slave_params, io->rate, 0)) < 0 ||
	    (err = snd_pcm_hw_params_set_period_size_near(pcm->slave, slave_params, &period, NULL)) < 0 ||
	    (err = snd_pcm_hw_params_set_buffer_size_near(pcm->slave, slave_params, &buffer)) < 0)
		return err;
	return snd_pcm_hw_params(pcm->slave, slave_params);
}

static int fixed_prepare(snd_pcm_ioplug_t *io)
{
	struct fixed_pcm *pcm = io->private_data;
	pcm->transferred = 0;
	return snd_pcm_prepare(pcm->slave);
}

static int fixed_drain(snd_pcm_ioplug_t *io)
{
	struct fixed_pcm *pcm = io->private_data;
	snd_pcm_nonblock(pcm->slave, 0);
	int err = snd_pcm_drain(pcm->slave);
	snd_pcm_nonblock(pcm->slave, 1);
	return err;
}

static int fixed_delay(snd_pcm_ioplug_t *io, snd_pcm_sframes_t *delay)
{
	struct fixed_pcm *pcm = io->private_data;
	if (snd_pcm_delay(pcm->slave, delay) < 0)
		*delay = 0;
	return 0;
}

static int fixed_close(snd_pcm_ioplug_t *io)
{
	struct fixed_pcm *pcm = io->private_data;
	snd_pcm_close(pcm->slave);
	close(io->poll_fd);
	free(pcm);
	return 0;
}

static const snd_pcm_ioplug_callback_t fixed_callbacks = {
	.start = fixed_start,
	.stop = fixed_stop,
	.pointer = fixed_pointer,
	.transfer = fixed_transfer,
	.hw_params = fixed_hw_params,
	.prepare = fixed_prepare,
	.drain = fixed_drain,
	.delay = fixed_delay,
	.close = fixed_close,
};

SND_PCM_PLUGIN_DEFINE_FUNC(intercom_lab_fixed)
{
	snd_config_iterator_t i, next;
	const char *slave_name = NULL, *format_name = NULL;
	long rate = 0, channels = 0;
	struct fixed_pcm *pcm;
	int err;

	snd_config_for_each(i, next, conf) {
		snd_config_t *entry = snd_config_iterator_entry(i);
		const char *id;
		if (snd_config_get_id(entry, &id) < 0)
			continue;
		if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0 || strcmp(id, "hint") == 0)
			continue;
		if (strcmp(id, "slave") == 0 && snd_config_get_string(entry, &slave_name) >= 0)
			continue;
		if (strcmp(id, "rate") == 0 && snd_config_get_integer(entry, &rate) >= 0)
			continue;
		if (strcmp(id, "channels") == 0 && snd_config_get_integer(entry, &channels) >= 0)
			continue;
		if (strcmp(id, "format") == 0 && snd_config_get_string(entry, &format_name) >= 0)
			continue;
		SNDERR("Unknown or malformed field %s", id);
		return -EINVAL;
	}
	snd_pcm_format_t format = format_name ? snd_pcm_format_value(format_name) : SND_PCM_FORMAT_UNKNOWN;
	if (!slave_name || rate <= 0 || channels <= 0 || format == SND_PCM_FORMAT_UNKNOWN) {
		SNDERR("slave, rate, channels and format are all required");
		return -EINVAL;
	}

	pcm = calloc(1, sizeof(*pcm));
	if (!pcm)
		return -ENOMEM;
	err = snd_pcm_open_lconf(&pcm->slave, slave_name, stream, SND_PCM_NONBLOCK, root);
	if (err < 0) {
		free(pcm);
		return err;
	}
	pcm->io.version = SND_PCM_IOPLUG_VERSION;
	pcm->io.name = "intercom lab fixed-format device";
	pcm->io.callback = &fixed_callbacks;
	pcm->io.private_data = pcm;
	/* Never waited on (the pointer always shows room or data), but alsa-lib wants one. */
	pcm->io.poll_fd = eventfd(1, EFD_CLOEXEC);
	pcm->io.poll_events = stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN;

	unsigned int access = SND_PCM_ACCESS_RW_INTERLEAVED;
	unsigned int only_format = format;
	if ((err = snd_pcm_ioplug_create(&pcm->io, name, stream, mode)) < 0) {
		snd_pcm_close(pcm->slave);
		close(pcm->io.poll_fd);
		free(pcm);
		return err;
	}
	if ((err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_ACCESS, 1, &access)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_FORMAT, 1, &only_format)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_CHANNELS, channels, channels)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_RATE, rate, rate)) < 0 ||
	    (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0) {
		snd_pcm_ioplug_delete(&pcm->io);
		return err;
	}
	*pcmp = pcm->io.pcm;
	return 0;
}

SND_PCM_PLUGIN_SYMBOL(intercom_lab_fixed);
