"""Trial 29's workload (/work/trial29-findings.md, the tester's mine/rag.toml): a RAG assistant, 12,000 / p95 30,000
prompt tokens, 350 / p95 900 output tokens, 6 requests/s at the peak, p95 TTFT 3 s and TPOT 50 ms, Llama-3.3-70B with
one spare replica. Test modules import it (pytest puts tests/ on sys.path)."""

RAG_WORKLOAD = """title = "RAG assistant"
traffic_change = 0.2

[workload]
peak_requests_per_s = 6
average_requests_per_s = 3
prompt_tokens_mean = 12000
prompt_tokens_high = 30000
output_tokens_mean = 350
output_tokens_high = 900
high_percentile = 95
ttft_target_s = 3
tpot_target_s = 0.05

[defaults]
model = "Llama-3.3-70B"
spare_replicas = 1
"""

#: The trial's deployment today: Llama-3.3-70B in fp16 (weights and KV cache) on rented H100s.
LLAMA_TODAY = """
[[option]]
name = "Llama 3.3 70B, H100 rented (today)"
gpu = "H100"
pricing = "cloud"
weight_precision = "fp16"
kv_precision = "fp16"
"""
