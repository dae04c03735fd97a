import TesseraKernels

/// ``GraphOp/constant``: a node made with its value (``Node/init(value:)``), never built from
/// inputs.
package enum ConstantRule: OpRule {
    package static var kind: OpKind { .leaf }

    package static func infer(_ op: GraphOp, _ inputs: [Node]) throws(OpError) -> ([Int], KernelScalarType) {
        throw OpError("[constant] a constant node is built from a value")
    }
}
