import IntercomIO
import Testing

struct ChildProcessTests {
    @Test func aProgramsExitStatusComesBack() throws {
        #expect(try runProgram(["true"]) == 0)
        #expect(try runProgram(["sh", "-c", "exit 3"]) == 3)
    }

    @Test func aProgramKilledByASignalCountsAs128PlusIt() throws {
        #expect(try runProgram(["sh", "-c", "kill -TERM $$"]) == 128 + 15)
    }

    @Test func aMissingProgramIsAnErrorThatNamesIt() {
        #expect {
            _ = try runProgram(["intercom-no-such-program"])
        } throws: { error in
            "\(error)".contains("intercom-no-such-program could not run")
        }
    }
}
