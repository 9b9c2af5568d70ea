import { ApiProperty } from '@nestjs/swagger';

export const DEPENDENCY_STATES = ['healthy', 'unhealthy'] as const;
export type DependencyState = (typeof DEPENDENCY_STATES)[number];

export class DependenciesDto {
  @ApiProperty({ enum: DEPENDENCY_STATES }) database: DependencyState;
  @ApiProperty({ enum: DEPENDENCY_STATES }) cache: DependencyState;
  @ApiProperty({ enum: DEPENDENCY_STATES }) platform_api: DependencyState;
}

export class HealthReportDto {
  @ApiProperty({ example: 'messaging-connector' }) service: string;
  @ApiProperty({ example: '0.1.0' }) version: string;
  @ApiProperty({ enum: ['healthy', 'degraded'] }) status: 'healthy' | 'degraded';
  @ApiProperty({ type: DependenciesDto }) dependencies: DependenciesDto;
}

export class LivenessDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
}

export class ReadinessDto extends DependenciesDto {
  @ApiProperty({ enum: ['ready', 'not_ready'] }) status: 'ready' | 'not_ready';
}
