"""PyTorch, impl=torch_nn: the two cases PyTorch has a module for, torch.nn.RNN (elman,
tanh) and torch.nn.LSTM (lstm), loaded with SPEC's weights, under torch.no_grad(); and
elman_grad and lstm_grad, the modules' forward and backward (autograd) for the weights'
gradients.

PyTorch keeps weights as [out, in] (it computes x @ W_ih^T), so W_in / W_x / W are stored
transposed; its LSTM gate order along 4H is i, f, g, o, as SPEC's. It adds two biases
(b_ih + b_hh): SPEC's b goes into b_ih and b_hh is zero, so the bias counts once.

Every function takes a case's inputs (spec.inputs) and returns a zero-argument call.
"""

import torch

torch.set_grad_enabled(False)


def set_threads(n):
    torch.set_num_threads(n)


def load(module, w_ih, w_hh, b):
    module.weight_ih_l0.copy_(torch.from_numpy(w_ih.T))
    module.weight_hh_l0.copy_(torch.from_numpy(w_hh.T))
    module.bias_ih_l0.copy_(torch.from_numpy(b))
    module.bias_hh_l0.zero_()
    return module.eval()


def elman(x, w_in, w, b):
    (_, batch, i), hidden = x.shape, w.shape[0]
    rnn = load(torch.nn.RNN(i, hidden, nonlinearity="tanh", bias=True), w_in, w, b)
    x, h0 = torch.from_numpy(x), torch.zeros(1, batch, hidden)
    return lambda: rnn(x, h0)[0]


def elman_grad(x, w_in, w, b):
    # The gradients of the sum of every h_t by autograd (torch.nn.RNN's backward), with
    # respect to the weights as SPEC stores them: W_ih^T, W_hh^T, b_ih.
    (_, batch, i), hidden = x.shape, w.shape[0]
    rnn = load(torch.nn.RNN(i, hidden, nonlinearity="tanh", bias=True), w_in, w, b)
    x, h0 = torch.from_numpy(x), torch.zeros(1, batch, hidden)
    params = [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0]

    def call():
        with torch.enable_grad():
            loss = rnn(x, h0)[0].sum()
            g_ih, g_hh, g_b = torch.autograd.grad(loss, params)
        return g_ih.T, g_hh.T, g_b

    return call


def lstm(x, w_x, w_h, b):
    (_, batch, i), hidden = x.shape, w_h.shape[0]
    rnn = load(torch.nn.LSTM(i, hidden, bias=True), w_x, w_h, b)
    x = torch.from_numpy(x)
    h0 = c0 = torch.zeros(1, batch, hidden)
    return lambda: rnn(x, (h0, c0))[0]


def lstm_grad(x, w_x, w_h, b):
    # The gradients of the sum of every h_t by autograd (torch.nn.LSTM's backward), with
    # respect to the weights as SPEC stores them: W_ih^T, W_hh^T, b_ih (b_hh is zero and
    # not asked for; its gradient is b_ih's).
    (_, batch, i), hidden = x.shape, w_h.shape[0]
    rnn = load(torch.nn.LSTM(i, hidden, bias=True), w_x, w_h, b)
    x = torch.from_numpy(x)
    h0 = c0 = torch.zeros(1, batch, hidden)
    params = [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0]

    def call():
        with torch.enable_grad():
            loss = rnn(x, (h0, c0))[0].sum()
            g_ih, g_hh, g_b = torch.autograd.grad(loss, params)
        return g_ih.T, g_hh.T, g_b

    return call


def versions():
    return dict(torch=torch.__version__,
                mkldnn=torch.backends.mkldnn.is_available())
