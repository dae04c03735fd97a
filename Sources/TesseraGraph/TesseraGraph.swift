// TesseraGraph: the lazy graph IR, shape inference, scheduling, fusion, memory planning and
// execution on the kernel layer.
