"""Cross-check of scan semantics against PyTensor itself (not part of CI).

Each case is a program from tests/views.rs or tests/taps.rs written in PyTensor; the printed
values are the ones those tests assert. Run: python3 -m venv /tmp/pt && . /tmp/pt/bin/activate
&& pip install pytensor && python tools/pytensor_crosscheck.py
Last run: PyTensor 3.0.7, 2026-11-22, every line equal to the tests' numbers.
"""
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor import scan
pytensor.config.cxx = ""  # python mode, no compiler needed
def run(outs, inputs, vals):
    f = pytensor.function(inputs, outs, mode="FAST_COMPILE")
    return f(*vals)
s = pt.lvector("s")
o,_ = scan(lambda a,b: a*10+b, sequences=dict(input=s, taps=[-1,0]), go_backwards=True)
print("pairs", run(o,[s],[np.arange(1,7)]))
o,_ = scan(lambda back,ahead: back*100+ahead, sequences=dict(input=s, taps=[-2,1]), go_backwards=True)
print("past_and_future", run(o,[s],[np.arange(1,9)]))
acc0 = pt.as_tensor_variable(np.int64(0))
o,_ = scan(lambda a,b,acc: acc*1000+a*10+b, sequences=dict(input=s, taps=[1,3]), outputs_info=acc0, go_backwards=True)
print("future_sum", run(o,[s],[np.arange(1,8)]))
a = pt.lvector("a"); b = pt.lvector("b")
o,_ = scan(lambda x,y: x*100+y, sequences=[a,b], go_backwards=True)
print("backwards_pairs", run(o,[a,b],[np.array([1,2,3,4,5]), np.array([10,20,30])]))
u = pt.lvector("u"); init = pt.lvector("init")
o,_ = scan(lambda ut,utp1,xm2,xm1: xm2+xm1*10+ut*1000+utp1*100000, sequences=dict(input=u,taps=[0,1]), outputs_info=dict(initial=init,taps=[-2,-1]), go_backwards=True)
print("backwards_mitsot", run(o,[u,init],[np.arange(1,6), np.array([1,2])]))
v = pt.dvector("v"); n = pt.iscalar("n")
o,_ = scan(lambda x,acc: acc+x, sequences=v, outputs_info=pt.as_tensor_variable(np.float64(0.0)), n_steps=n, go_backwards=True)
print("last_sums", run(o,[v,n],[np.arange(1.,7.), 3]))
o,_ = scan(lambda a,b: a*10+b, sequences=dict(input=s, taps=[-1,0]), n_steps=n, go_backwards=True)
print("last_pairs", run(o,[s,n],[np.arange(1,7), 2]))
o,_ = scan(lambda xm2,xm1: xm2+xm1*10, outputs_info=dict(initial=init,taps=[-2,-1]), n_steps=3)
print("mitsot_extra_rows", run(o,[init],[np.array([1,2,7,9])]))
o,_ = scan(lambda x: x*2, sequences=v, n_steps=n)
print("zero_steps", run(o,[v,n],[np.arange(1.,4.), 0]).shape)
m = pt.dmatrix("m")
o,_ = scan(lambda r: r*2, sequences=m)
print("zero_rows_map", run(o,[m],[np.zeros((0,3))]).shape)
