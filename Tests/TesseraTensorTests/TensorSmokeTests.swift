import TesseraTensor
import Testing

@Test func tensorModuleLoads() { #expect(Bool(true)) }
