set -e
# Runs the original r76 through fake apex (apexcompat.amp) and this hand-written native target
# (apex and apexcompat blocked), prints the relative parameter distances.  Usage: bash compare.sh
HERE=$(cd "$(dirname "$0")" && pwd); E=$(cd "$HERE/../.." && pwd); O=$E/repos/r76_registry_gan_loss_ids
N=$(mktemp -d); cp -r "$O"/. "$N"/; cp -r "$HERE"/toygen/. "$N"/toygen/; W=$(mktemp -d); cd "$W"
run_o() { PYTHONPATH=$O:$E/scripts:$E/fake_apex python $O/train.py "$@"; }
run_n() { python -c "import sys; sys.modules['apex']=None; sys.modules['apexcompat']=None; sys.argv=['train.py']+sys.argv[1:]; sys.path[:0]=['$N','$E/scripts']; import runpy; runpy.run_path('$N/train.py', run_name='__main__')" "$@"; }
run_o --params-out o_full.pt --ckpt-out o_full.ckpt > o_full.log
run_o --steps 15 --ckpt-out o_half.ckpt > /dev/null
run_o --opt-level O0 --params-out o_fp32.pt > /dev/null
for b in "off --no-amp" "static --loss-scale 512" "native --no-amp --fp16-scaler" "noreg --reg-no-scaler" "o0 --opt-level O0"; do
  set -- $b; name=$1; shift
  run_o "$@" --params-out o_$name.pt > /dev/null; run_n "$@" --params-out n_$name.pt > /dev/null
done
run_n --params-out n_full.pt --ckpt-out n_full.ckpt > n_full.log
run_n --steps 15 --resume o_half.ckpt --params-out n_res.pt --ckpt-out n_res.ckpt > n_res.log
python - <<'PY'
import torch
def rel(a, b):
    a, b = torch.load(a), torch.load(b)
    num = sum(((a[k]-b[k])**2).sum() for k in a) ** .5; den = sum((b[k]**2).sum() for k in b) ** .5
    return float(num/den)
print("native full vs O1 orig   ", rel("n_full.pt", "o_full.pt"))
print("native resumed vs O1 orig", rel("n_res.pt", "o_full.pt"))
for b in ("off", "static", "native", "noreg", "o0"):
    print(f"branch {b:7s} native vs orig", rel(f"n_{b}.pt", f"o_{b}.pt"))
print("orig O1 vs orig fp32 (fp16 noise scale)", rel("o_full.pt", "o_fp32.pt"))
print("orig full amp state", torch.load("o_full.ckpt")["amp"])
print("native full state", [(s["scale"], s["_growth_tracker"]) for s in torch.load("n_full.ckpt")["amp"]])
print("native resumed state", [(s["scale"], s["_growth_tracker"]) for s in torch.load("n_res.ckpt")["amp"]])
PY
grep "distance 29" o_full.log n_full.log n_res.log
