extension CoreMLSpec {
    /// The type of a feature and its constraints (`FeatureType`).
    package struct FeatureType: Sendable, Equatable {
        /// The kinds of feature a model can take or produce.
        package enum Kind: Sendable, Equatable {
            /// A 64-bit integer.
            case int64
            /// A double.
            case double
            /// A string.
            case string
            /// An image with its size constraints and color space.
            case image(ImageFeatureType)
            /// A multi-dimensional array.
            case multiArray(ArrayFeatureType)
            /// A dictionary from int64 or string keys to doubles.
            case dictionary(keyType: DictionaryKeyType)
            /// A sequence of int64s or strings.
            case sequence(SequenceFeatureType)
            /// A state buffer (iOS 18); only array states exist.
            case state(ArrayFeatureType)
        }

        /// What kind of feature it is.
        package var kind: Kind
        /// Whether the feature may be left out of an input.
        package var isOptional: Bool

        /// Creates a feature type.
        package init(kind: Kind, isOptional: Bool = false) {
            self.kind = kind
            self.isOptional = isOptional
        }
    }

    /// The key type of a dictionary feature.
    package enum DictionaryKeyType: Sendable, Equatable {
        /// `Int64FeatureType` keys.
        case int64
        /// `StringFeatureType` keys.
        case string
    }

    /// The element type of a multi-array feature (`ArrayFeatureType.ArrayDataType`); raw
    /// values are the protobuf enum's numbers.
    package enum ArrayDataType: Int32, Sendable, CaseIterable {
        /// `FLOAT32` (0x10020).
        case float32 = 65568
        /// `DOUBLE` (0x10040).
        case double = 65600
        /// `INT32` (0x20020).
        case int32 = 131104
        /// `FLOAT16` (0x10010), iOS 16 and later.
        case float16 = 65552
        /// `INT8` (0x20008), iOS 26 and later.
        case int8 = 131080
    }

    /// A multi-array feature (`ArrayFeatureType`).
    package struct ArrayFeatureType: Sendable, Equatable {
        /// The allowed shapes, when the default shape is not the only one.
        package enum ShapeFlexibility: Sendable, Equatable {
            /// One of a list of shapes.
            case enumerated([[Int]])
            /// Any shape whose dimension `i` lies in `ranges[i]`.
            case range([SizeRange])
        }

        /// The value a missing optional input takes.
        package enum DefaultValue: Sendable, Equatable {
            /// `intDefaultValue`.
            case int(Int32)
            /// `floatDefaultValue`.
            case float(Float)
            /// `doubleDefaultValue`.
            case double(Double)
        }

        /// The default (or only) shape.
        package var shape: [Int] = []
        /// The element type; `nil` when the file leaves it unset.
        package var dataType: ArrayDataType?
        /// Other allowed shapes.
        package var shapeFlexibility: ShapeFlexibility?
        /// The default value for optional inputs.
        package var defaultValue: DefaultValue?

        /// Creates an array type.
        package init(shape: [Int] = [], dataType: ArrayDataType? = nil, shapeFlexibility: ShapeFlexibility? = nil) {
            self.shape = shape
            self.dataType = dataType
            self.shapeFlexibility = shapeFlexibility
        }
    }

    /// An inclusive range of sizes (`SizeRange`); `upperBound == nil` means unbounded.
    package struct SizeRange: Sendable, Equatable {
        /// The smallest size.
        package var lowerBound: Int
        /// The largest size, or `nil` for no limit (the file's −1).
        package var upperBound: Int?

        /// Creates a range.
        package init(lowerBound: Int, upperBound: Int?) {
            self.lowerBound = lowerBound
            self.upperBound = upperBound
        }
    }

    /// An image feature (`ImageFeatureType`).
    package struct ImageFeatureType: Sendable, Equatable {
        /// Pixel layouts (`ImageFeatureType.ColorSpace`).
        package enum ColorSpace: Int32, Sendable {
            /// Not set.
            case invalid = 0
            /// One 8-bit channel.
            case grayscale = 10
            /// Three 8-bit channels, red first.
            case rgb = 20
            /// Three 8-bit channels, blue first.
            case bgr = 30
            /// One float16 channel.
            case grayscaleFloat16 = 40
        }

        /// Other allowed sizes.
        package enum SizeFlexibility: Sendable, Equatable {
            /// One of a list of (width, height) sizes.
            case enumerated([(width: Int, height: Int)])
            /// Any width and height in the ranges.
            case range(width: SizeRange, height: SizeRange)

            /// Compares element by element (tuples are not `Equatable`).
            package static func == (lhs: Self, rhs: Self) -> Bool {
                switch (lhs, rhs) {
                case (.enumerated(let a), .enumerated(let b)):
                    a.count == b.count && zip(a, b).allSatisfy { $0.width == $1.width && $0.height == $1.height }
                case (.range(let aw, let ah), .range(let bw, let bh)): aw == bw && ah == bh
                default: false
                }
            }
        }

        /// The default width in pixels.
        package var width = 0
        /// The default height in pixels.
        package var height = 0
        /// The pixel layout.
        package var colorSpace = ColorSpace.invalid
        /// Other allowed sizes.
        package var sizeFlexibility: SizeFlexibility?

        /// Creates an image type.
        package init() {}
    }

    /// A sequence feature (`SequenceFeatureType`).
    package struct SequenceFeatureType: Sendable, Equatable {
        /// The element kind.
        package enum Element: Sendable, Equatable {
            /// `Int64FeatureType` elements.
            case int64
            /// `StringFeatureType` elements.
            case string
        }

        /// The element kind; `nil` when unset.
        package var element: Element?
        /// The allowed lengths, when constrained.
        package var sizeRange: SizeRange?

        /// Creates a sequence type.
        package init(element: Element? = nil, sizeRange: SizeRange? = nil) {
            self.element = element
            self.sizeRange = sizeRange
        }
    }
}
