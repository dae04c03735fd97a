import Foundation
import Tessera
import Testing
import _TesseraTestSupport

@testable import tessera

/// `tessera predict --input NAME=VALUE`, read against the input descriptions of classic
/// fixture models (`Tests/Fixtures/classic`, made by `tools/make_classic_*fixtures.py`).
@Suite("tessera predict reads --input values as the model's inputs declare")
struct FeatureInputParsingTests {
    /// The description of input `name` of fixture `model`.
    static func input(_ name: String, of model: String) throws -> MLFeatureDescription {
        let model = try MLModel(contentsOf: Fixtures.url("classic/\(model).mlmodel"))
        return try #require(model.modelDescription.inputDescriptionsByName[name])
    }

    /// Writes `text` to a temporary file and returns its path.
    static func temporaryFile(_ text: String, suffix: String = ".json") throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tessera-cli-\(UUID().uuidString)\(suffix)")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("a literal for a double input is a double; for an int64 input an int64")
    func numbers() throws {
        let double = try FeatureInputParsing.value("3.5", for: Self.input("f0", of: "xgb_regressor"), name: "f0")
        #expect(double.type == .double)
        #expect(double.doubleValue == 3.5)
        let code = try Self.input("code", of: "spec_categorical_int64_to_string")
        let int64 = try FeatureInputParsing.value("-42", for: code, name: "code")
        #expect(int64.type == .int64)
        #expect(int64.int64Value == -42)
        #expect(throws: CLIError.self) { try FeatureInputParsing.value("4.2", for: code, name: "code") }
        #expect(throws: CLIError.self) {
            try FeatureInputParsing.value("many", for: Self.input("f0", of: "xgb_regressor"), name: "f0")
        }
    }

    @Test("a literal for a string input stays a string, even when it reads as a number")
    func strings() throws {
        let color = try Self.input("color", of: "spec_categorical_string_to_int64")
        let value = try FeatureInputParsing.value("male", for: color, name: "color")
        #expect(value.type == .string)
        #expect(value.stringValue == "male")
        let digits = try FeatureInputParsing.value("12", for: color, name: "color")
        #expect(digits.type == .string)
        #expect(digits.stringValue == "12")
    }

    @Test("an input the model does not declare: a number if it reads as one, else a string")
    func undeclared() throws {
        #expect(try FeatureInputParsing.value("2.25", for: nil, name: "x").doubleValue == 2.25)
        let word = try FeatureInputParsing.value("female", for: nil, name: "x")
        #expect(word.type == .string)
        #expect(word.stringValue == "female")
    }

    @Test("comma-separated numbers for a multi-array input take its declared shape")
    func commaSeparated() throws {
        let input = try Self.input("input", of: "sk_knn_inverse_distance")  // float64 [4]
        let value = try FeatureInputParsing.value("5.1, 3.5,1.4,0.2", for: input, name: "input")
        let array = try #require(value.multiArrayValue)
        #expect(array.shape == [4])
        #expect(MLShapedArray<Double>(converting: array).scalars == [5.1, 3.5, 1.4, 0.2])
        #expect(throws: CLIError.self) { try FeatureInputParsing.value("a,b", for: input, name: "input") }
    }

    @Test("@FILE.json: an object is a dictionary with the input's key type")
    func dictionaries() throws {
        let words = try Self.input("words", of: "sk_pipeline_dictvectorizer_logistic")
        let path = try Self.temporaryFile(#"{"good": 2, "bad": 0.5}"#)
        let value = try FeatureInputParsing.value("@\(path)", for: words, name: "words")
        #expect(value.type == .dictionary)
        #expect(value.dictionaryValue[AnyHashable("good")]?.doubleValue == 2)
        #expect(value.dictionaryValue[AnyHashable("bad")]?.doubleValue == 0.5)

        let counts = try Self.input("counts", of: "sk_dict_vectorizer_int64_keys")
        let intPath = try Self.temporaryFile(#"{"7": 3, "-1": 0.25}"#)
        let keyed = try FeatureInputParsing.value("@\(intPath)", for: counts, name: "counts")
        #expect(keyed.dictionaryValue[AnyHashable(Int64(7))]?.doubleValue == 3)
        #expect(keyed.dictionaryValue[AnyHashable(Int64(-1))]?.doubleValue == 0.25)
        #expect(keyed.dictionaryValue[AnyHashable("7")] == nil)

        let badKey = try Self.temporaryFile(#"{"seven": 3}"#)
        #expect(throws: CLIError.self) { try FeatureInputParsing.value("@\(badKey)", for: counts, name: "counts") }
        let badValue = try Self.temporaryFile(#"{"good": "yes"}"#)
        #expect(throws: CLIError.self) { try FeatureInputParsing.value("@\(badValue)", for: words, name: "words") }
    }

    @Test("@FILE.json: strings are a sequence, nested numbers a multi-array, scalars by the input's type")
    func jsonValues() throws {
        let sequence = try FeatureInputParsing.value(
            "@\(Self.temporaryFile(#"["the", "cat", "sat"]"#))", for: nil, name: "tokens")
        #expect(sequence.type == .sequence)
        #expect(sequence.sequenceValue?.stringValues == ["the", "cat", "sat"])

        let matrix = try FeatureInputParsing.value(
            "@\(Self.temporaryFile("[[1, 2, 3], [4, 5, 6]]"))", for: nil, name: "m")
        let array = try #require(matrix.multiArrayValue)
        #expect(array.shape == [2, 3])
        #expect(MLShapedArray<Double>(converting: array).scalars == [1, 2, 3, 4, 5, 6])
        #expect(throws: CLIError.self) {
            try FeatureInputParsing.value("@\(Self.temporaryFile("[[1, 2], [3]]"))", for: nil, name: "m")
        }

        let code = try Self.input("code", of: "spec_categorical_int64_to_string")
        let int64 = try FeatureInputParsing.value("@\(Self.temporaryFile("9"))", for: code, name: "code")
        #expect(int64.type == .int64)
        #expect(int64.int64Value == 9)
        let string = try FeatureInputParsing.value("@\(Self.temporaryFile(#""red""#))", for: nil, name: "c")
        #expect(string.stringValue == "red")
        #expect(throws: CLIError.self) {
            try FeatureInputParsing.value("@/nonexistent/tessera-cli.json", for: nil, name: "m")
        }
    }

    @Test("FILE.npy is a multi-array, read as NumPy wrote it")
    func npy() throws {
        let directory = Fixtures.url("kernels")
        let file = try #require(
            FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().first { $0.hasSuffix(".npy") })
        let url = directory.appendingPathComponent(file)
        let array = try #require(try FeatureInputParsing.value(url.path, for: nil, name: "x").multiArrayValue)
        let expected = try Fixtures.npy("kernels/\(file)")
        #expect(array.shape.map(\.intValue) == expected.shape)
        #expect(throws: CLIError.self) { try FeatureInputParsing.value("/nonexistent/x.npy", for: nil, name: "x") }
    }

    @Test("a parsed classic input predicts as the fixture's own value does")
    func predictsThroughTheModel() throws {
        let model = try MLModel(contentsOf: Fixtures.url("classic/spec_categorical_string_to_int64.mlmodel"))
        let value = try FeatureInputParsing.value(
            "blue", for: model.modelDescription.inputDescriptionsByName["color"], name: "color")
        let output = try model.prediction(from: MLDictionaryFeatureProvider(features: ["color": value]))
        // LabelEncoder sorts the colours: amber 0, blue 1, green 2, red 3, violet 4.
        #expect(output.featureValue(for: "code")?.int64Value == 1)
    }
}
