import Testing
import TesseraGraph

@Test func graphModuleLoads() { #expect(Bool(true)) }
