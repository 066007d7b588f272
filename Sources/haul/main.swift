import HaulCLI

await HaulCommand.main()
