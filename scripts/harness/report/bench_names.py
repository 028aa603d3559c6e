"""What the benchmark report calls each implementation and each variant of intercom."""
LAB_LABEL = {"ours": "intercom (default settings: adaptive codec, AEC + denoise + AGC on)",
             "ours-pi": "intercom, `--profile pi` (20 ms frames at 48 kb/s)", "trx": "trx", "gstreamer": "GStreamer"}
LAB_SHORT = {"ours": "intercom", "ours-pi": "intercom pi", "trx": "trx", "gstreamer": "GStreamer"}
FILE_LABEL = {"ours": "intercom, default settings (from a file: 10 ms frames)", "ours-10ms": "intercom, `--frame-ms 10`",
              "ours-20ms": "intercom, `--frame-ms 20`", "ours-unencrypted": "intercom, default, `--unencrypted`",
              "gstreamer": "GStreamer"}
DUPLEX_LABEL = {"ours": "intercom, AEC + denoise + AGC on", "ours-no-aec-denoise": "intercom, `--no-aec --no-denoise`",
                "ours-no-dtx": "intercom, `--no-dtx`", "ours-unencrypted": "intercom, `--unencrypted`",
                "ours-pi": "intercom, `--profile pi`",
                "trx": "trx (`tx` + `rx`)", "gstreamer": "GStreamer (two pipelines)"}
