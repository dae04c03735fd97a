import Foundation
import TesseraKernels
import TesseraTensor

extension MLMultiArrayDataType {
    /// Binds `count` elements at `pointer` to this type's Swift scalar, so typed access is
    /// well-defined.
    func bind(_ pointer: UnsafeMutableRawPointer, count: Int) {
        switch self {
        case .double: pointer.bindMemory(to: Double.self, capacity: count)
        case .float32: pointer.bindMemory(to: Float.self, capacity: count)
        case .float16: pointer.bindMemory(to: Float16.self, capacity: count)
        case .int32: pointer.bindMemory(to: Int32.self, capacity: count)
        case .int8: pointer.bindMemory(to: Int8.self, capacity: count)
        }
    }

    /// The element at `pointer` as a number.
    func load(_ pointer: UnsafeRawPointer) -> NSNumber {
        switch self {
        case .double: return NSNumber(value: pointer.load(as: Double.self))
        case .float32: return NSNumber(value: pointer.load(as: Float.self))
        case .float16: return NSNumber(value: Float(pointer.load(as: Float16.self)))
        case .int32: return NSNumber(value: pointer.load(as: Int32.self))
        case .int8: return NSNumber(value: pointer.load(as: Int8.self))
        }
    }

    /// Stores `number` at `pointer`, converted as `NSNumber`'s accessors convert
    /// (`floatValue`, `int32Value`, …).
    func store(_ number: NSNumber, at pointer: UnsafeMutableRawPointer) {
        switch self {
        case .double: pointer.storeBytes(of: number.doubleValue, as: Double.self)
        case .float32: pointer.storeBytes(of: number.floatValue, as: Float.self)
        case .float16: pointer.storeBytes(of: Float16(number.floatValue), as: Float16.self)
        case .int32: pointer.storeBytes(of: number.int32Value, as: Int32.self)
        case .int8: pointer.storeBytes(of: number.int8Value, as: Int8.self)
        }
    }

    /// The type's name as Core ML prints it (`Float32`, `Int32`, …).
    var displayName: String {
        switch self {
        case .double: return "Double"
        case .float32: return "Float32"
        case .float16: return "Float16"
        case .int32: return "Int32"
        case .int8: return "Int8"
        }
    }
}
