import Testing
@testable import Varlink
