import Testing
import TesseraTensor

@Test func tensorModuleLoads() { #expect(Bool(true)) }
