import TesseraKernels
print("benchmarks")
