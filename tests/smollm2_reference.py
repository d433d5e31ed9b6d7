"""transformers' SmolLM2-135M-Instruct, loaded from the same GGUF file as our forward: the
reference the model tests check our numbers against.

transformers takes about 30 s to turn the GGUF file into a model (most of it converting the
tokenizer and dequantising through the gguf package), and three test modules need it. So the
first load also writes what it made into the download cache (the weights as safetensors, the
config and the tokenizer, ~520 MB), under a name that holds the GGUF file's sha256 and
transformers' version; later loads, in this run or the next, read that in about 2 s. Under
pytest-xdist a lock makes one worker convert while the others wait.
"""

import fcntl
import functools
import shutil

import pytest

from sitebuild.fetched import assets
from toymodels.export import llama

WEIGHTS = "weights.safetensors"


def gguf_path():
    """The GGUF file, or a skip where its package is not installed."""
    try:
        return llama.smollm2_path()
    except FileNotFoundError as e:
        pytest.skip(f"{e}: the checks against the model's own file need it")


@functools.cache
def transformers_smollm2():
    """(torch, model, tokenizer): transformers' eager-attention model in float32, on one thread."""
    torch = pytest.importorskip("torch", reason="the reference check needs torch (export tier)")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")
    pytest.importorskip("accelerate", reason="transformers loads a GGUF file with accelerate")
    pytest.importorskip("gguf", reason="transformers reads a GGUF file with the gguf package")
    from safetensors.torch import load_file, save_file

    torch.set_num_threads(1)
    path = gguf_path()
    folder = (
        assets.cache_dir()
        / f"smollm2-transformers-{assets.sha256(path)[:16]}-{transformers.__version__}"
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "smollm2-transformers.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes
        if not (folder / WEIGHTS).exists():
            net = transformers.AutoModelForCausalLM.from_pretrained(
                str(path.parent), gguf_file=path.name, dtype=torch.float32
            )
            tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            part = folder.with_name(folder.name + ".part")
            shutil.rmtree(part, ignore_errors=True)
            net.config.save_pretrained(part)
            tok.save_pretrained(part)
            # the output matrix is the embedding (tied): stored once, tied again on loading
            state = net.state_dict()
            save_file(
                {k: v.contiguous() for k, v in state.items() if k != "lm_head.weight"},
                part / WEIGHTS,
            )
            shutil.rmtree(folder, ignore_errors=True)
            part.rename(folder)
    config = transformers.AutoConfig.from_pretrained(folder)
    net = transformers.AutoModelForCausalLM.from_config(
        config, attn_implementation="eager", dtype=torch.float32
    )
    keys = net.load_state_dict(load_file(folder / WEIGHTS), strict=False)
    assert keys.missing_keys == ["lm_head.weight"] and not keys.unexpected_keys, keys
    net.tie_weights()
    assert net.lm_head.weight.data_ptr() == net.model.embed_tokens.weight.data_ptr()
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    return torch, net.eval(), tok
