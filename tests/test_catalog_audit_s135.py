"""Catalog numbers audited against their primary sources (s135). Each test pins a corrected figure, or one checked
and found right where the entry's own source was second-hand, with the page it comes from in the docstring.
"""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.model.collectives import mesh_group_share

CAT = default_catalog()


class TestGaudi3Fabric:
    def test_scale_up_bandwidth_is_21_ports_not_24(self):
        """Intel Gaudi documentation, 'Intel Gaudi Network Configuration'
        (https://docs.habana.ai/en/latest/Management_and_Monitoring/Network_Configuration/index.html): 'Each Intel
        Gaudi 3 AI accelerator has 21 scale-up ports and three scale-out ports running at 200Gbps', 'The theoretical
        peak of scale-up bandwidth from each Gaudi is 21*200Gbps = 21*25 GB/s = 525 GB/s unidirectional'. The catalog
        had 24 x 25 = 600 GB/s, counting the three scale-out ports as in-node fabric."""
        assert CAT.gpu("Gaudi 3").interconnect_bytes_per_s == pytest.approx(21 * 200e9 / 8)

    def test_fabric_is_a_fully_connected_mesh_of_three_ports_per_peer(self):
        """Same page: 'The scale-up ports are used to connect to seven other accelerators inside a single HLS-3 box
        in an All2All manner, essentially using 21/7=3 scale-up ports for each connection'. So a pair of Gaudi 3s
        shares 3 x 25 = 75 GB/s a direction (1/7 of the aggregate), as a pair of MI300X shares one xGMI link."""
        g = CAT.gpu("Gaudi 3")
        assert (g.mesh_links_per_gpu, g.mesh_link_bytes_per_s) == (7, pytest.approx(3 * 200e9 / 8))
        share = g.mesh_link_bytes_per_s / g.interconnect_bytes_per_s
        assert float(mesh_group_share(share, 2.0)) * g.interconnect_bytes_per_s == pytest.approx(75e9)
        assert float(mesh_group_share(share, 8.0)) * g.interconnect_bytes_per_s == pytest.approx(525e9)


class TestConfigJsonShapesOfTheNewestModels:
    def test_glm5_matches_its_config_json(self):
        """zai-org/GLM-5-FP8 config.json as copied in ai-dynamo/aiconfigurator
        src/aiconfigurator/model_configs/zai-org--GLM-5-FP8_config.json (commit 691ec908): num_hidden_layers 78,
        hidden_size 6144, num_attention_heads 64, intermediate_size 12288, vocab_size 154880, max_position_embeddings
        202752, n_routed_experts 256, n_shared_experts 1, num_experts_per_tok 8, moe_intermediate_size 2048,
        first_k_dense_replace 3, kv_lora_rank 512, q_lora_rank 2048, qk_nope_head_dim 192, qk_rope_head_dim 64,
        v_head_dim 256, tie_word_embeddings false. (The entry had only transformers' GlmMoeDsaConfig defaults.)"""
        m = CAT.model("GLM-5")
        assert (m.num_layers, m.hidden_size, m.num_attention_heads, m.intermediate_size) == (78, 6144, 64, 12288)
        assert (m.vocab_size, m.max_context, m.tie_word_embeddings) == (154880, 202752, False)
        assert (m.moe.num_experts, m.moe.experts_per_token, m.moe.expert_intermediate_size) == (256, 8, 2048)
        assert (m.moe.num_shared_experts, m.moe.dense_layers) == (1, 3)
        mla = m.mla
        assert (mla.kv_lora_rank, mla.q_lora_rank, mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim) == (
            512,
            2048,
            192,
            64,
            256,
        )

    def test_kimi_k25_matches_its_config_json(self):
        """moonshotai/Kimi-K2.5 config.json (text part) as copied in ai-dynamo/aiconfigurator
        src/aiconfigurator/model_configs/moonshotai--Kimi-K2.5_config.json (commit 821eb9a6): 61 layers, hidden 7168,
        64 heads, intermediate 18432, vocab 163840, max_position_embeddings 262144, 384 routed experts of 2048, 8 per
        token, 1 shared, first_k_dense_replace 1, kv_lora_rank 512, q_lora_rank 1536, qk_nope 128, rope 64, v 128."""
        m = CAT.model("Kimi-K2.5")
        assert (m.num_layers, m.hidden_size, m.num_attention_heads, m.intermediate_size) == (61, 7168, 64, 18432)
        assert (m.vocab_size, m.max_context) == (163840, 262144)
        assert (m.moe.num_experts, m.moe.experts_per_token, m.moe.expert_intermediate_size) == (384, 8, 2048)
        assert (m.moe.num_shared_experts, m.moe.dense_layers) == (1, 1)
        assert (m.mla.kv_lora_rank, m.mla.q_lora_rank, m.mla.qk_nope_head_dim, m.mla.v_head_dim) == (
            512,
            1536,
            128,
            128,
        )

    def test_glm47_matches_its_config_json(self):
        """zai-org/GLM-4.7-FP8 config.json as copied in ai-dynamo/aiconfigurator
        src/aiconfigurator/model_configs/zai-org--GLM-4.7-FP8_config.json (commit a0ba9ec6): 92 layers, hidden 5120,
        96 heads, 8 KV heads, head_dim 128, intermediate 12288, vocab 151552, max_position_embeddings 202752, 160
        experts of 1536, 8 per token, 1 shared, first_k_dense_replace 3."""
        m = CAT.model("GLM-4.7")
        assert (m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads, m.head_dim) == (
            92,
            5120,
            96,
            8,
            128,
        )
        assert (m.intermediate_size, m.vocab_size, m.max_context) == (12288, 151552, 202752)
        assert (m.moe.num_experts, m.moe.experts_per_token, m.moe.expert_intermediate_size) == (160, 8, 1536)
        assert (m.moe.num_shared_experts, m.moe.dense_layers) == (1, 3)


class TestRtxPro6000Prices:
    def test_hyperstack_rate_card_quotes(self):
        """Hyperstack's public rate card (https://www.hyperstack.cloud/gpu-pricing), transcribed verbatim on 2026-08-26
        in api-evangelist/nexgen-cloud plans/nexgen-cloud-plans-pricing.yml: 'NVIDIA RTX Pro 6000 SE vram_gb: 96
        price_per_hour: 1.85' (On-Demand), 'price_per_hour_from: 1.30' (Reserved), 'price_per_hour: 1.48' (Spot VMs).
        The entry said no dated public price was found."""
        g = CAT.gpu("RTX PRO 6000 Blackwell Server Edition")
        # trial 17 F3 added CoreWeave's on-demand row ($20.00 / 8); Hyperstack's quotes are read by provider here
        quotes = {k: next(p for p in g.prices if p.kind == k and p.provider.startswith("Hyperstack"))
                  for k in ("on-demand", "reserved", "spot")}  # fmt: skip
        assert {k: p.usd_per_gpu_hour for k, p in quotes.items()} == {"on-demand": 1.85, "reserved": 1.30, "spot": 1.48}
        assert {p.date for p in quotes.values()} == {"2026-08-26"}
        assert all("hyperstack.cloud/gpu-pricing" in p.source for p in quotes.values())


class TestQwQ32BContext:
    def test_max_context_is_the_configs_40960(self):
        """Qwen/QwQ-32B config.json, as pasted in QwenLM/QwQ issue #20 and vllm-project/vllm issue #17306
        (2025-04-28; the author bolded the two lines they edited, sliding_window and use_sliding_window):
        '"max_position_embeddings": 40960', served with '--max-model-len 40960'. The model card's 'Full 131,072
        tokens' needs YaRN added to the config; max_context follows max_position_embeddings (the catalog's field
        mapping, models.toml header), as Command-R keeps its config's 8192 against a 128K card."""
        m = CAT.model("QwQ-32B")
        assert m.max_context == 40960
        assert (m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads) == (64, 5120, 40, 8)
        assert (m.intermediate_size, m.vocab_size) == (27648, 152064)


class TestMistralNemoContext:
    def test_trained_window_kept_and_config_value_recorded(self):
        """Mistral-Nemo-Instruct-2407: the card says 'Trained with a 128k context window' and Mistral's API lists
        open-mistral-nemo with 'max_context_length': 131072 (simonw/llm-mistral issue #23); its config.json says
        max_position_embeddings 1024000 (ollama/ollama issue #8277, the GGUF's 'llama.context_length': 1024000;
        NVIDIA NeMo MistralNeMoConfig12B's comment). The entry keeps the trained 131072 and says why, instead of
        claiming (as before) that the config says 131072."""
        m = CAT.model("Mistral-Nemo-12B")
        assert m.max_context == 131072
        assert "1024000" in m.notes and "Trained with a 128k context window" in m.notes


MiB = 2**20
GiB = 2**30


class TestBlackwellUltraMemory:
    """nvidia-smi's memory.total is the enabled HBM less a driver reservation that scales with it on Blackwell:
    B200 184320 - 183359 = 961 MiB of 180 GiB; GB200 190464 - 189471 = 993 MiB of 186 GiB (5.3 MiB per GiB)."""

    @pytest.mark.parametrize(
        "entry, smi_mib, enabled_gib",
        [
            # 'NVIDIA B300 SXM6 AC, 275,040 MiB each' (boi-doingthings/on-prem-coding-assist notes/lab-notebook.md).
            ("B300 288GB", 275040, 270),
            # 'NVIDIA GB300, 284208 MiB' (GKE GB300 set-up guide; TensorRT-LLM run on nvl72d001-T18, 2026-09-09).
            ("GB300 NVL72", 284208, 279),
            # Already right, checked with the same rule: 'NVIDIA B200, 183359 MiB'; 'NVIDIA GB200, 189471 MiB'.
            ("B200 180GB", 183359, 180),
            ("GB200 NVL72", 189471, 186),
        ],
    )
    def test_enabled_memory_matches_nvidia_smi(self, entry, smi_mib, enabled_gib):
        """The catalog's memory_bytes is the enabled HBM: nvidia-smi's total plus a reservation of 4.5-6 MiB per GiB
        (288 GiB, as the B300 and GB300 entries had, would print about 293,400 MiB, 18,000 and 9,000 MiB more)."""
        g = CAT.gpu(entry)
        assert g.memory_bytes == enabled_gib * GiB
        reserved_mib = g.memory_bytes / MiB - smi_mib
        assert 4.5 * enabled_gib <= reserved_mib <= 6.0 * enabled_gib
