-- wrk script: POST the body in $BENCH_BODY with the key in $BENCH_KEY (and X-Session-Id $BENCH_SESSION when set).
local file = io.open(os.getenv("BENCH_BODY"), "rb")
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
local key = os.getenv("BENCH_KEY")
if key and key ~= "" then wrk.headers["Authorization"] = "Bearer " .. key end
local session = os.getenv("BENCH_SESSION")
if session and session ~= "" then wrk.headers["X-Session-Id"] = session end
