#!/usr/bin/env python3
"""Writes a tiny llama-architecture GGUF with random weights, for tests.

    tiny-gguf.py VOCAB.gguf OUT.gguf

It also writes OUT.steer.json: the ids of the tokens "false" and "true"
(with and without SentencePiece's leading-space mark), so a test can start
llama-server with --logit-bias to make the model say off task (or on
task) for certain, which random weights otherwise decide by chance.

It cannot judge anything: it exists so the LLM judge's tests talk to a
real llama-server that loads a real model and answers real requests
(under a response_format schema, schema-valid JSON). 2 layers, 64
dimensions, the SentencePiece vocab of VOCAB.gguf (llama.cpp's
models/ggml-vocab-llama-spm.gguf) and a ChatML chat template. The weights
come from a fixed seed, so every build writes the same file. Needs the
gguf-py of the same llama.cpp on PYTHONPATH, and numpy.
"""
import json
import sys

import numpy as np
import gguf

LAYERS, DIM, FF, HEADS, CTX = 2, 64, 128, 4, 2048

CHATML = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def main(vocab_path: str, out_path: str) -> None:
    vocab = gguf.GGUFReader(vocab_path)

    def field(name):
        return vocab.fields[name].contents()

    tokens = field("tokenizer.ggml.tokens")
    n_vocab = len(tokens)

    w = gguf.GGUFWriter(out_path, "llama")
    w.add_name("antidrift-tiny-random")
    w.add_context_length(CTX)
    w.add_embedding_length(DIM)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(HEADS)
    w.add_rope_dimension_count(DIM // HEADS)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model(field("tokenizer.ggml.model"))
    w.add_tokenizer_pre(field("tokenizer.ggml.pre"))
    w.add_token_list(tokens)
    w.add_token_scores(field("tokenizer.ggml.scores"))
    w.add_token_types(field("tokenizer.ggml.token_type"))
    w.add_bos_token_id(field("tokenizer.ggml.bos_token_id"))
    w.add_eos_token_id(field("tokenizer.ggml.eos_token_id"))
    w.add_unk_token_id(field("tokenizer.ggml.unknown_token_id"))
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHATML)

    rng = np.random.default_rng(12)

    def rand(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    # numpy shapes are (rows, cols) = GGUF's (ne1, ne0): a DIM → n_vocab
    # projection is stored as (n_vocab, DIM).
    w.add_tensor("token_embd.weight", rand(n_vocab, DIM))
    w.add_tensor("output_norm.weight", ones(DIM))
    w.add_tensor("output.weight", rand(n_vocab, DIM))
    for i in range(LAYERS):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones(DIM))
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + t + ".weight", rand(DIM, DIM))
        w.add_tensor(p + "ffn_norm.weight", ones(DIM))
        w.add_tensor(p + "ffn_gate.weight", rand(FF, DIM))
        w.add_tensor(p + "ffn_up.weight", rand(FF, DIM))
        w.add_tensor(p + "ffn_down.weight", rand(DIM, FF))

    steer = {word: [i for i, t in enumerate(tokens) if t in (word, "\u2581" + word)] for word in ("false", "true")}
    with open(out_path.removesuffix(".gguf") + ".steer.json", "w") as f:
        json.dump(steer, f)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {out_path}: llama, {LAYERS} layers, {DIM} dims, {n_vocab} tokens, random weights", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
