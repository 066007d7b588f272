import HaulCLI
import HaulURLSession

// `haul` with the URLSession transport linked in: `haul --engine=urlsession` runs this program.
await HaulCommand.main(urlSession: .urlSession)
