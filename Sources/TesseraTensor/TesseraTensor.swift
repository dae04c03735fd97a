// TesseraTensor: Apple's MLTensor and MLShapedArray API over the lazy graph.
