"""dycl: a compiler for dynamic neural networks."""
