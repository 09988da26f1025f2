"""Trial 30's scenarios (/work/trial30-findings.md, the tester's /tmp/mina/*.toml): a 70B chat service, 3 requests/s
of 4,000 / p95 12,000 prompt and 500 / p95 1,500 output tokens, p95 TTFT 2 s and TPOT 50 ms, 36 months at an 8% cost of
capital, bought against rented H100s. Test modules import it (pytest puts tests/ on sys.path)."""

#: /tmp/mina/chat70b.toml: the catalog's purchase price ($30,000 a GPU, $32,010 host server per 8-GPU node).
CHAT70B = """title = "Internal assistant: chat (Llama 70B) 3-year budget"
baseline = "H100, rented"
traffic_change = 0.2

[workload]
peak_requests_per_s = 3
average_requests_per_s = 1.2
prompt_tokens_mean = 4000
prompt_tokens_high = 12000
output_tokens_mean = 500
output_tokens_high = 1500
high_percentile = 95
ttft_target_s = 2
tpot_target_s = "50 ms"
growth_over_horizon = 0
horizon_months = 12

[defaults]
model = "Llama-3.3-70B"
spare_replicas = 1
amortization_months = 36
power_usd_per_kwh = 0.12
pue = 1.3

[[option]]
name = "H100, bought"
gpu = "H100"
pricing = "purchase"
node_size = 8

[[option]]
name = "H100, rented"
gpu = "H100"
pricing = "cloud"

[[option]]
name = "H100, reserved"
gpu = "H100"
pricing = "cloud"
price_kind = "reserved"

[[option]]
name = "H200, rented"
gpu = "H200"
pricing = "cloud"

[finance]
horizon_months = 36
cost_of_capital = 0.08
"""

#: /tmp/mina/chat70b-quote.toml: the same with a vendor-like quote, $40,000 a GPU and $80,000 per host server, and no
#: H200 option.
CHAT70B_QUOTE = CHAT70B.replace(
    "node_size = 8\n", "node_size = 8\npurchase_usd = 40000\nhost_server_usd = 80000\n"
).replace('[[option]]\nname = "H200, rented"\ngpu = "H200"\npricing = "cloud"\n\n', "")
